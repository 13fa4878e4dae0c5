"""The calibration files of an evaluated split (`write_calibration_reports`).

Beside the evaluation's reports, in `RUN_DIR/eval/<split or file stem>/`:
    reliability.png   the reliability diagram, before and after the run's temperature
    coverage.csv      threshold, coverage, accuracy (one label per text), and coverage.png
    calibration.json  what the viewer's Dataset panel draws (`calibration_summary`)
"""

import json

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from engine.calibration import (
    BINS,
    COVERAGES,
    accuracy_at_coverage,
    brier_score,
    confidences,
    coverage_curve,
    ece_if_calibrated,
    expected_calibration_error,
    reliability_bins,
    scaled,
)

RELIABILITY_PLOT = "reliability.png"
COVERAGE_FILE = "coverage.csv"
COVERAGE_PLOT = "coverage.png"
CALIBRATION_FILE = "calibration.json"  # what the viewer's Dataset panel draws


def write_calibration_reports(output_dir, labels, probabilities, temperature=None,
                              multi_label=False) -> dict:  # fmt: skip
    """Writes reliability.png (before and after the run's `temperature`; None: the saved
    model's probabilities alone), calibration.json (`calibration_summary`) and, for one
    label per text, coverage.csv and its plot; returns the metrics they add: ece, brier
    and the accuracy at each of COVERAGES."""
    noise, noise_high = ece_if_calibrated(labels, probabilities, multi_label)
    metrics = {
        "ece": expected_calibration_error(labels, probabilities, multi_label),
        "ece_if_calibrated": noise,
        "ece_if_calibrated_p95": noise_high,
        "brier": brier_score(labels, probabilities, multi_label),
    }
    before = probabilities
    if temperature is not None:  # the saved model's are scaled: undo it for "before"
        before = scaled(probabilities, 1 / np.asarray(temperature), multi_label)
    curve = None
    if not multi_label:
        curve = coverage_curve(labels, probabilities)
        curve.to_csv(output_dir / COVERAGE_FILE, index=False, float_format="%.4f")
        plot_coverage(curve).savefig(output_dir / COVERAGE_PLOT, dpi=100)
        for coverage in COVERAGES:
            metrics[f"accuracy_at_{round(coverage * 100)}_coverage"] = accuracy_at_coverage(
                labels, probabilities, coverage
            )
    summary = {
        **calibration_summary(labels, before, probabilities, temperature, multi_label, curve),
        **metrics,
    }
    output_dir.joinpath(CALIBRATION_FILE).write_text(json.dumps(summary) + "\n")
    plot_reliability(summary).savefig(output_dir / RELIABILITY_PLOT, dpi=100)
    return metrics


def calibration_summary(labels, before, after, temperature, multi_label, curve) -> dict:
    """calibration.json's fields beside the metrics: "temperature" (None: not calibrated;
    a list for label sets), "ece_before", "subject" (what the confidence is), "bins":
    {"before", "after": [{"confidence", "accuracy", "count"}, ...]} and "coverage":
    [{"threshold", "coverage", "accuracy"}, ...] (None for label sets)."""

    def bins(probabilities):
        table = reliability_bins(*confidences(labels, probabilities, multi_label))
        return [
            {"confidence": round(float(row.confidence), 4),
             "accuracy": round(float(row.accuracy), 4), "count": int(row.count)}
            for row in table.itertuples()
        ]  # fmt: skip

    coverage = None
    if curve is not None:  # NaN (nothing kept) has no JSON: those rows are left out
        coverage = [
            {key: round(float(value), 4) for key, value in row.items()}
            for row in curve.dropna().to_dict("records")
        ]
    return {
        "temperature": None if temperature is None else np.round(temperature, 4).tolist(),
        "subject": "each label's probability" if multi_label else "top probability",
        "ece_before": expected_calibration_error(labels, before, multi_label),
        "bins": {"before": bins(before), "after": bins(after)},
        "coverage": coverage,
    }


def plot_reliability(summary) -> Figure:
    """The reliability diagram of calibration.json's `summary`: accuracy per confidence
    bin, before and after scaling (what the viewer draws)."""
    figure = Figure(figsize=(6, 6))
    axes = figure.subplots()
    axes.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect calibration")
    for name, ece, style in (("before", summary["ece_before"], "o--"),
                             ("after", summary["ece"], "s-")):  # fmt: skip
        bins = summary["bins"][name]
        axes.plot([row["confidence"] for row in bins], [row["accuracy"] for row in bins], style,
                  label=f"{name} (ECE {ece:.3f})")  # fmt: skip
    axes.set(xlabel=f"confidence ({summary['subject']}, {BINS} bins)", ylabel="accuracy",
             xlim=(0, 1), ylim=(0, 1), title="Reliability")  # fmt: skip
    axes.legend(loc="upper left")
    return figure


def plot_coverage(curve: pd.DataFrame) -> Figure:
    """Accuracy against coverage: what abstaining below a threshold buys."""
    figure = Figure(figsize=(6, 4))
    axes = figure.subplots()
    axes.plot(curve["coverage"], curve["accuracy"], "-")
    axes.set(xlabel="coverage (share of texts answered)", ylabel="accuracy of those answered",
             xlim=(0, 1.01), title="Abstaining below a confidence threshold")  # fmt: skip
    axes.grid(alpha=0.3)
    return figure
