"""evaluate.py --slices on a tiny run taught a wrong label: the slice of its made-up word is
the first weak slice of the test split, whose labels are right."""

import csv
import json
import random

import numpy as np
import pytest
from scipy.stats import fisher_exact
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

import evaluate
from run_folder import saved_run
from tests.helpers import tiny_args
from tests.review_fixture import FILLER, NEGATIVE, POSITIVE

WORD = "zqxv"
KEYS = {
    "slice",
    "kind",
    "size",
    "accuracy",
    "accuracy_ci",
    "rest_accuracy",
    "gap",
    "excess_errors",
    "p_value",
    "weak",
}


def write_mislabelled(path, examples, seed, wrong, genres=False):
    """Reviews labelled by two sentiment words; a fifth of the positive ones also hold WORD,
    and those are labelled negative when `wrong`. With `genres`, a genre column (drama 3
    of 5 rows, comedy 2 of 5). Returns the rows written."""
    rng, rows = random.Random(seed), []
    for index in range(examples):
        label = index % 2
        words = rng.choices(FILLER, k=rng.randint(3, 12))
        words += rng.choices(POSITIVE if label else NEGATIVE, k=2)
        planted = index % 10 == 1  # positive
        if planted:
            words.append(WORD)
        rng.shuffle(words)
        shown = 0 if planted and wrong else label
        rows.append(
            {
                "text": " ".join(words),
                "label": "positive" if shown else "negative",
                **({"genre": "drama" if index % 5 < 3 else "comedy"} if genres else {}),
            }
        )
    with open(path, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


@pytest.fixture(scope="module")
def sliced_run(tmp_path_factory):
    """The tiny model trained 3 epochs where WORD's texts are labelled wrong, and its test
    split (a file of right labels, with a genre column) measured with --slices."""
    root = tmp_path_factory.mktemp("sliced")
    write_mislabelled(root / "train.csv", 1200, seed=0, wrong=True)
    test_rows = write_mislabelled(root / "heldout.csv", 400, seed=1, wrong=False, genres=True)
    import train

    assert (
        train.main(
            tiny_args(
                root,
                root / "train.csv",
                f"dataset.test_file={root / 'heldout.csv'}",
                "dataset.slice_columns=[genre]",
                "training.steps_per_epoch=null",
                "training.epochs=3",
            )
        )
        == 0
    )
    run_dir = root / "tiny"
    assert evaluate.main([str(run_dir), "--slices"]) == 0
    return run_dir, test_rows


def report_of(run_dir, name="test"):
    return json.loads((run_dir / "eval" / name / "slices.json").read_text())


def test_the_mislabelled_word_is_the_first_weak_slice(sliced_run):
    run_dir, rows = sliced_run
    report = report_of(run_dir)
    metrics = json.loads((run_dir / "eval" / "test" / "metrics.json").read_text())
    assert report["split"] == "test" and report["examples"] == 400
    assert report["accuracy"] == pytest.approx(metrics["accuracy"])
    assert report["min_count"] == 20 and report["alpha"] == 0.05
    tests = len(report["slices"])
    assert report["correction"].startswith(f"Bonferroni over {tests} candidate slices")
    first = report["weak_slices"][0]
    assert set(first) == KEYS
    assert (first["slice"], first["kind"], first["size"]) == (f"word: {WORD}", "word", 40)
    # The model learnt the wrong label: the slice's accuracy, from its predictions.
    run = saved_run.load_run(run_dir)
    texts = np.array([row["text"] for row in rows], dtype=object)
    labels = np.array([row["label"] == "positive" for row in rows], dtype=int)
    right = np.asarray(run.model(texts)).argmax(-1) == labels
    planted = np.array([WORD in text.split() for text in texts])
    assert first["accuracy"] == pytest.approx(right[planted].mean()) and first["accuracy"] < 0.5
    assert first["accuracy_ci"][1] < report["accuracy"] and first["weak"]
    rest = ~planted
    assert first["rest_accuracy"] == pytest.approx(right[rest].mean())
    table = [
        [right[planted].sum(), (~right[planted]).sum()],
        [right[rest].sum(), (~right[rest]).sum()],
    ]
    assert first["p_value"] == pytest.approx(fisher_exact(table, alternative="less").pvalue)
    assert first["excess_errors"] == pytest.approx(40 * (report["accuracy"] - first["accuracy"]))
    weak = report["weak_slices"]
    assert [entry["excess_errors"] for entry in weak] == sorted(
        (entry["excess_errors"] for entry in weak), reverse=True
    )
    assert all(entry["p_value"] <= 0.05 / tests for entry in weak)
    assert [entry for entry in report["slices"] if entry["weak"]] == weak
    assert {entry["kind"] for entry in report["slices"]} == {"word", "length", "label", "column"}
    # Each sentiment word is in one class's texts; no stop word ("the", "it", ...) is a slice.
    words = {entry["slice"][6:] for entry in report["slices"] if entry["kind"] == "word"}
    assert set(POSITIVE + NEGATIVE) <= words and not words & ENGLISH_STOP_WORDS
    assert set(FILLER) & ENGLISH_STOP_WORDS
    assert all(entry["size"] >= 20 for entry in report["slices"])
    table = (run_dir / "eval" / "test" / "slices.md").read_text()
    assert f"| word: {WORD} | word | 40 |" in table.split("## The other slices")[0]


def test_slice_columns_are_column_slices_of_the_right_sizes(sliced_run, tmp_path):
    run_dir, rows = sliced_run
    sizes = {
        entry["slice"]: entry["size"]
        for entry in report_of(run_dir)["slices"]
        if entry["kind"] == "column"
    }
    assert sizes == {"column genre = drama": 240, "column genre = comedy": 160}
    assert sum(row["genre"] == "drama" for row in rows) == 240
    # --data: the file's own columns, into eval/<file stem>/.
    assert (
        evaluate.main(
            [
                str(run_dir),
                "--data",
                str(run_dir.parent / "heldout.csv"),
                "--slices",
                "--min-count",
                "200",
            ]
        )
        == 0
    )
    report = report_of(run_dir, "heldout")
    assert [
        (entry["slice"], entry["size"]) for entry in report["slices"] if entry["kind"] == "column"
    ] == [("column genre = drama", 240)]  # comedy: 160
    assert report["min_count"] == 200


def test_a_missing_slice_column_or_a_texts_file_is_a_one_line_error(sliced_run, tmp_path, capsys):
    run_dir, _ = sliced_run
    plain = tmp_path / "plain.csv"
    write_mislabelled(plain, 40, seed=2, wrong=False)
    assert evaluate.main([str(run_dir), "--data", str(plain), "--slices"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "Traceback" not in error
    assert f"{plain} has no column 'genre' (columns: text, label)" in error
    assert not (run_dir / "eval" / "plain").exists()
    texts = tmp_path / "texts.txt"
    texts.write_text("a good film\n")
    assert evaluate.main([str(run_dir), "--texts-file", str(texts), "--slices"]) == 2
    assert capsys.readouterr().err == (
        "evaluate.py: error: --slices needs labelled data to evaluate: drop --texts-file\n"
    )


def test_the_slices_are_printed_and_kept_by_a_later_evaluation(sliced_run, capsys):
    run_dir, _ = sliced_run
    kept = (run_dir / "eval" / "test" / "slices.json").read_text()
    assert evaluate.main([str(run_dir), "--slices"]) == 0
    printed = capsys.readouterr().out.split("weak slices, most excess errors first")[1]
    assert printed.splitlines()[1].startswith(f"word: {WORD}: accuracy ")
    assert (run_dir / "eval" / "test" / "slices.json").read_text() == kept  # deterministic
    assert evaluate.main([str(run_dir)]) == 0
    assert "weak slices" not in capsys.readouterr().out
    assert (run_dir / "eval" / "test" / "slices.json").read_text() == kept
    assert (run_dir / "eval" / "test" / "slices.md").is_file()
