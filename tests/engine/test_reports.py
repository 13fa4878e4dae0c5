"""engine/reports.py: metrics agree with Keras, and the confusion matrix is drawn without pyplot."""

import keras
import numpy as np
import pytest

from engine import reports


def test_loss_matches_keras_categorical_cross_entropy():
    labels = np.array([0, 2, 1, 2])
    probabilities = np.array(
        [[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.5, 0.4, 0.1], [1.0, 0.0, 0.0]]
    )  # The last one: p(true) = 0, clipped.
    metrics = reports.classification_metrics(labels, probabilities, num_classes=3)
    expected = keras.losses.CategoricalCrossentropy()(np.eye(3)[labels], probabilities)
    assert metrics["loss"] == pytest.approx(float(expected), rel=1e-5)
    assert metrics["accuracy"] == 0.5 and metrics["num_examples"] == 4
    # Class 1 is never predicted: its F1 is 0, not an error.
    # Per class: F1 1/2 (one hit, two false alarms), 0, 2/3 (one hit of two).
    assert metrics["macro_f1"] == pytest.approx((1 / 2 + 0.0 + 2 / 3) / 3)


@pytest.mark.parametrize("num_classes", [3, 52])
def test_confusion_matrix_figure(num_classes):
    matrix = np.arange(num_classes * num_classes).reshape(num_classes, num_classes)
    figure = reports.plot_confusion_matrix(matrix, [f"class {i}" for i in range(num_classes)])
    axes = figure.axes[0]
    assert axes.get_xlabel() == "predicted" and axes.get_ylabel() == "true"
    # Counts are written in the cells only while they stay readable.
    assert len(axes.texts) == (num_classes * num_classes if num_classes <= 20 else 0)


def test_write_reports_files(tmp_path):
    labels = np.array([0, 1, 1])
    probabilities = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    metrics = reports.write_reports(
        tmp_path, ["a", "b", "c"], labels, probabilities, ["neg", "pos"], worst=5
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "calibration.json",
        "confusion_matrix.csv",
        "confusion_matrix.png",
        "coverage.csv",
        "coverage.png",
        "metrics.json",
        "per_class.csv",
        "predictions.csv",
        "reliability.png",
        "worst_mistakes.csv",
    ]
    assert metrics["accuracy"] == pytest.approx(2 / 3)
    assert (tmp_path / "worst_mistakes.csv").read_text().splitlines()[1].startswith("c,pos,neg,")
