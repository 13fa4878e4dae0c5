"""evaluate.py on a tiny trained run: every output file, comparisons and error cases."""

import csv
import json
import random
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # train.py and evaluate.py live at the repository root.
TINY = str(ROOT / "configs" / "tiny.yaml")

import evaluate  # noqa: E402
import train  # noqa: E402


def write_fixture(path):
    """240 short 'reviews' whose label is given by two sentiment words: learnable fast."""
    rng = random.Random(0)
    positive = "good great wonderful superb fine lovely brilliant moving".split()
    negative = "bad awful boring dull terrible weak poor tedious".split()
    filler = "the a film movie plot actor story scene it was is and of".split()
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        for index in range(240):
            label = index % 2
            words = rng.choices(filler, k=rng.randint(3, 12))
            words += rng.choices(positive if label else negative, k=2)
            rng.shuffle(words)
            writer.writerow([" ".join(words), "positive" if label else "negative"])
    return path


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    data_file = write_fixture(tmp_path_factory.mktemp("data") / "reviews.csv")
    root = tmp_path_factory.mktemp("runs")
    assert train.main(["--config", TINY, "--set", "dataset.name=null",
                       f"dataset.train_file={data_file}", f"output.root={root}"]) == 0
    return root / "tiny"


def test_writes_every_report_for_the_test_split(run_dir, capsys):
    assert evaluate.main([str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "accuracy" in out and "macro_f1" in out and f"{run_dir}/eval/test/" in out
    eval_dir = run_dir / "eval" / "test"
    metrics = json.loads((eval_dir / "metrics.json").read_text())
    trained = json.loads((run_dir / "metrics.json").read_text())["test"]
    # The saved end-to-end model scores the raw test texts exactly as training scored ids.
    assert metrics["accuracy"] == trained["accuracy"]
    assert metrics["loss"] == pytest.approx(trained["loss"], abs=1e-6)
    assert set(metrics) >= {"accuracy", "macro_f1", "weighted_f1", "loss"}

    per_class = pd.read_csv(eval_dir / "per_class.csv")
    assert list(per_class.columns) == ["class", "precision", "recall", "f1", "support"]
    assert list(per_class["class"]) == ["negative", "positive"]
    assert per_class["support"].sum() == metrics["num_examples"]

    matrix = pd.read_csv(eval_dir / "confusion_matrix.csv", index_col=0)
    assert list(matrix.columns) == ["negative", "positive"]
    assert matrix.to_numpy().sum() == metrics["num_examples"]
    assert (eval_dir / "confusion_matrix.png").read_bytes()[:4] == b"\x89PNG"

    predictions = pd.read_csv(eval_dir / "predictions.csv")
    assert list(predictions.columns)[:4] == ["text", "true_label", "predicted_label",
                                             "probability"]
    assert len(predictions) == metrics["num_examples"]
    accuracy = (predictions.true_label == predictions.predicted_label).mean()
    assert accuracy == pytest.approx(metrics["accuracy"])
    worst = pd.read_csv(eval_dir / "worst_mistakes.csv")
    assert (worst.true_label != worst.predicted_label).all()
    assert list(worst.probability) == sorted(worst.probability, reverse=True)


def test_validation_split_and_own_files_and_side_by_side(run_dir, tmp_path, capsys):
    extra = tmp_path / "extra.csv"
    extra.write_text("text,label\nsuch a wonderful film,positive\na dull boring plot,negative\n")
    assert evaluate.main([str(run_dir), str(run_dir), "--split", "validation"]) == 0
    out = capsys.readouterr().out
    assert out.count("validation") >= 2  # One row per run.
    assert (run_dir / "eval" / "validation" / "metrics.json").exists()
    assert evaluate.main([str(run_dir), "--data", str(extra)]) == 0
    metrics = json.loads((run_dir / "eval" / "extra" / "metrics.json").read_text())
    assert metrics["num_examples"] == 2


def error_of(argv, capsys):
    capsys.readouterr()
    assert evaluate.main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("evaluate.py: error: ") and "\n" not in error
    return error


def test_missing_run_folder(tmp_path, capsys):
    assert "no such run folder" in error_of([str(tmp_path / "nope")], capsys)


def test_unfinished_run_is_named(tmp_path, capsys):
    (tmp_path / "run.partial").mkdir()
    assert "unfinished run" in error_of([str(tmp_path / "run")], capsys)


def test_missing_model_file(run_dir, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(run_dir, broken)
    (broken / "model.keras").unlink()
    assert "model.keras: missing" in error_of([str(broken)], capsys)


def test_corrupt_model_file(run_dir, tmp_path, capsys):
    broken = tmp_path / "broken"
    shutil.copytree(run_dir, broken)
    (broken / "model.keras").write_bytes(b"not a zip file")
    assert "model.keras: cannot load the model" in error_of([str(broken)], capsys)


def test_unknown_labels_in_own_file(run_dir, tmp_path, capsys):
    extra = tmp_path / "extra.csv"
    extra.write_text("text,label\ngreat,thumbs up\n")
    assert "labels ['thumbs up']" in error_of([str(run_dir), "--data", str(extra)], capsys)
