"""bench_slices: random columns give no weak slice, the planted one is the first weak slice;
on written predictions and on the tiny run's own."""

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_slices  # noqa: E402

ROW_KEYS = {
    "seed",
    "examples",
    "accuracy",
    "candidates",
    "random_slices",
    "random_weak",
    "random_min_p",
    "threshold",
    "weak",
    "planted_rank",
}


def write_evaluation(run_dir, examples=1000, accuracy=0.85, seed=100):
    """A run folder with only labels.json and eval/test/predictions.csv: texts of a few
    words, a gold label each, and predictions right with chance `accuracy`. Its `seed`
    is none of the bench's: one generator's draws would tie the columns to the outcomes."""
    rng = np.random.default_rng(seed)
    names = ["negative", "positive"]
    labels = rng.integers(2, size=examples)
    right = rng.random(examples) < accuracy
    words = np.array("good bad film plot story acting music scene".split())
    (run_dir / "eval" / "test").mkdir(parents=True)
    (run_dir / "labels.json").write_text(json.dumps(names))
    pd.DataFrame(
        {
            "text": [" ".join(rng.choice(words, size=6)) for _ in range(examples)],
            "true_label": [names[label] for label in labels],
            "predicted_label": [
                names[label if ok else 1 - label] for label, ok in zip(labels, right)
            ],
        }
    ).to_csv(run_dir / "eval" / "test" / "predictions.csv", index=False)
    return right


def printed_rows(output):
    lines = output.strip().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")], lines


def test_random_columns_are_never_weak_and_the_planted_slice_is_first(tmp_path, capsys):
    right = write_evaluation(tmp_path)
    assert bench_slices.main([str(tmp_path), "--seeds", "0", "1", "2"]) == 0
    rows, lines = printed_rows(capsys.readouterr().out)
    assert [row["seed"] for row in rows] == [0, 1, 2] and set(rows[0]) == ROW_KEYS
    for row in rows:
        assert (row["examples"], row["accuracy"]) == (1000, right.mean())
        # 2 + 5 + 20 values, each held by about 1000 / 20 = 50 texts or more.
        assert row["random_slices"] == 27 and row["random_weak"] == 0
        assert row["random_min_p"] > row["threshold"] == 0.05 / row["candidates"]
        assert row["planted_rank"] == 1 and row["weak"] >= 1
    # Each seed draws its own columns.
    assert len({row["random_min_p"] for row in rows}) == 3
    assert lines[-1] == (
        "Random columns: no weak slice in 3 of 3 seeds; the planted slice first in 3 of 3."
    )
    assert lines[-4].startswith("| 0 | 1000 | ")


def test_a_column_that_follows_the_errors_is_weak_one_that_does_not_is_not(tmp_path):
    right = write_evaluation(tmp_path)
    texts, labels, names, correct = bench_slices.load_outcomes(tmp_path, "test")
    assert (correct == right).all() and names == ["negative", "positive"]
    row = bench_slices.control_row(texts, labels, names, correct, seed=0)
    assert row["planted_rank"] == 1
    # With every prediction right, the planted value "wrong" holds no text: no candidate.
    row = bench_slices.control_row(texts, labels, names, np.ones(1000, dtype=bool), seed=0)
    assert row["planted_rank"] is None and row["weak"] == 0


def test_a_run_not_evaluated_is_a_one_line_error(tmp_path, capsys):
    assert bench_slices.main([str(tmp_path), "--split", "validation"]) == 2
    error = capsys.readouterr().err
    assert (
        error.count("\n") == 1 and "python evaluate.py" in error and "--split validation" in error
    )


def test_the_tiny_runs_predictions_pass_the_control(tiny_run_dir, data_file, tmp_path, capsys):
    import evaluate

    run_dir = tmp_path / "tiny"
    shutil.copytree(tiny_run_dir, run_dir, ignore=shutil.ignore_patterns("attention", "eval"))
    # Its 240 training texts: the test split's 24 are too few for slices of 10.
    assert evaluate.main([str(run_dir), "--data", str(data_file)]) == 0
    capsys.readouterr()
    seeds = [str(seed) for seed in range(20)]
    arguments = [str(run_dir), "--split", data_file.stem, "--min-count", "10", "--seeds", *seeds]
    assert bench_slices.main(arguments) == 0
    rows, lines = printed_rows(capsys.readouterr().out)
    assert len(rows) == 20 and all(row["examples"] == 240 for row in rows)
    assert [row["planted_rank"] for row in rows] == [1] * 20
    # Bonferroni keeps the chance of any false alarm in a seed under 5%, about 1 seed in
    # 20 may list one random slice, whose p-value is then just under 0.05 / m.
    false_alarms = [row["seed"] for row in rows if row["random_weak"]]
    assert len(false_alarms) <= 2, false_alarms
    assert lines[-1] == (
        f"Random columns: no weak slice in {20 - len(false_alarms)} of 20 seeds; the planted "
        "slice first in 20 of 20."
    )
