"""Calibration: the temperature folded into a head scales its probabilities exactly, a
trained run's saved model is the calibrated one, and the reported ECE is the one its
predictions.csv gives."""

import json

import keras
import numpy as np
import pandas as pd
import pytest

import evaluate
import train
from engine.calibration import (
    calibrate,
    coverage_curve,
    ece_if_calibrated,
    expected_calibration_error,
    scaled,
)
from models import predict_texts
from run_folder import saved_run
from tests.helpers import tiny_args


class Head:
    """Stands in for a classifier: a Dense head and whether its outputs are sigmoids."""

    def __init__(self, classes, multi_label):
        self.head = keras.layers.Dense(classes)
        self.head.build((None, 8))
        self.multi_label = multi_label

    def __call__(self, features):
        logits = np.asarray(self.head(features), np.float64)
        if self.multi_label:
            return 1 / (1 + np.exp(-logits))
        return np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)


@pytest.mark.parametrize("multi_label", [False, True])
def test_the_folded_head_gives_the_scaled_probabilities(multi_label):
    rng = np.random.default_rng(0)
    model = Head(3, multi_label)
    model.head.kernel.assign(rng.normal(size=(8, 3)) * 2)
    features = rng.normal(size=(3000, 8)).astype(np.float32)
    before = model(features)
    # Labels drawn from the probabilities twice softer: the fit must find T near 2.
    truth = scaled(before, 2.0, multi_label)
    labels = (
        (rng.random(truth.shape) < truth).astype(int)
        if multi_label
        else np.array([rng.choice(3, p=row / row.sum()) for row in truth])
    )
    predictions = {"validation": (before, labels), "test": (before, labels)}
    report, calibrated = calibrate(model, predictions, ["a", "b", "c"])
    after = model(features)
    np.testing.assert_allclose(after, calibrated["validation"][0], atol=1e-5)
    np.testing.assert_allclose(
        after, scaled(before, report_temperature(report), multi_label), atol=1e-5
    )
    assert np.all(np.abs(report_temperature(report) - 2) < 0.3)
    assert report["validation"]["ece_after"] < report["validation"]["ece_before"]
    if not multi_label:
        assert (after.argmax(-1) == before.argmax(-1)).all()  # no prediction changes


def report_temperature(report):
    found = report["temperature"]
    return np.array(list(found.values())) if isinstance(found, dict) else found


def test_a_trained_runs_saved_model_is_the_calibrated_one(tiny_run_dir, capsys):
    metrics = json.loads((tiny_run_dir / "metrics.json").read_text())
    calibration = metrics["calibration"]
    assert calibration["temperature"] > 0
    assert set(calibration) == {"temperature", "validation", "test"}
    run = saved_run.load_run(tiny_run_dir)
    assert run.temperature == calibration["temperature"]
    texts, labels = run.load_split("validation")
    probabilities = np.asarray(run.model.predict(np.asarray(texts, object), verbose=0))
    # The saved model gives the probabilities the metrics were computed from.
    picked = probabilities[np.arange(len(labels)), labels]
    assert -np.log(picked).mean() == pytest.approx(metrics["validation"]["loss"], abs=1e-4)
    assert expected_calibration_error(labels, probabilities) == pytest.approx(
        calibration["validation"]["ece_after"], abs=1e-4
    )


def test_evaluate_reports_the_ece_its_predictions_csv_gives(tiny_run_dir):
    assert evaluate.main([str(tiny_run_dir)]) == 0
    folder = tiny_run_dir / "eval" / "test"
    reported = json.loads((folder / "metrics.json").read_text())
    table = pd.read_csv(folder / "predictions.csv", keep_default_na=False)
    right = (table["true_label"] == table["predicted_label"]).to_numpy()
    # ECE from the top probability and whether it was right: two columns of one class each.
    probabilities = np.stack([table["probability"], 1 - table["probability"]], axis=1)
    assert expected_calibration_error(1 - right.astype(int), probabilities) == pytest.approx(
        reported["ece"], abs=1e-6
    )
    curve = pd.read_csv(folder / "coverage.csv")
    assert list(curve.columns) == ["threshold", "coverage", "accuracy"]
    assert curve["coverage"].iloc[0] == 1.0
    assert curve["accuracy"].iloc[0] == pytest.approx(reported["accuracy"], abs=1e-4)
    assert curve["coverage"].is_monotonic_decreasing
    kept = np.sort(table["probability"].to_numpy())[::-1][: round(0.9 * len(table))]
    assert reported["accuracy_at_90_coverage"] == pytest.approx(
        right[np.argsort(-table["probability"].to_numpy(), kind="stable")][: len(kept)].mean(),
        abs=1e-6,
    )
    for name in ("reliability.png", "coverage.png"):
        assert (folder / name).stat().st_size > 5_000
    assert 0 <= reported["brier"] <= 2


def test_the_coverage_curve_keeps_the_surest_texts():
    curve = coverage_curve(
        [0, 1, 1, 0], np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.4], [0.55, 0.45]])
    )
    row = curve[curve["threshold"] == 0.7].iloc[0]
    assert (row["coverage"], row["accuracy"]) == (0.5, 1.0)  # 0.9 and 0.7 kept, both right
    assert curve[curve["threshold"] == 0.0].iloc[0]["accuracy"] == 0.75  # one of four wrong


def test_evaluate_calibrate_folds_a_temperature_into_an_uncalibrated_run(
    tmp_path, data_file, capsys
):
    assert train.main(tiny_args(tmp_path, data_file, "training.calibrate=false")) == 0
    run_dir = tmp_path / "tiny"
    assert "calibration" not in json.loads((run_dir / "metrics.json").read_text())
    texts, labels = saved_run.load_run(run_dir).load_split("validation")
    before = predict_texts(saved_run.load_run(run_dir).model, texts)
    capsys.readouterr()
    assert evaluate.main([str(run_dir), "--calibrate"]) == 0
    assert f"{run_dir}: calibrated, temperature " in capsys.readouterr().out
    metrics = json.loads((run_dir / "metrics.json").read_text())
    temperature = metrics["calibration"]["temperature"]
    after = predict_texts(saved_run.load_run(run_dir).model, texts)
    np.testing.assert_allclose(after, scaled(before, temperature), atol=1e-5)
    picked = after[np.arange(len(labels)), labels]
    assert metrics["validation"]["loss"] == pytest.approx(-np.log(picked).mean(), abs=1e-4)
    assert json.loads((run_dir / "eval" / "test" / "metrics.json").read_text())["ece"] >= 0
    assert evaluate.main([str(run_dir), "--calibrate"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "is calibrated already (temperature" in error


def test_the_ece_of_a_calibrated_model_is_what_drawn_labels_give():
    """ece_if_calibrated against expected_calibration_error on labels drawn from the
    probabilities themselves; and a model always sure and right has none."""
    rng = np.random.default_rng(3)
    top = rng.uniform(0.5, 1.0, size=800)
    probabilities = np.stack([top, 1 - top], axis=1)
    drawn = [
        expected_calibration_error((rng.random(800) >= top).astype(int), probabilities)
        for _ in range(300)
    ]
    mean, high = ece_if_calibrated([0] * 800, probabilities)
    assert mean == pytest.approx(np.mean(drawn), rel=0.1)
    assert high == pytest.approx(np.percentile(drawn, 95), rel=0.15)
    assert ece_if_calibrated([0, 0], np.array([[1.0, 0.0], [1.0, 0.0]])) == (0.0, 0.0)
