"""Multi-label runs (`dataset.label_separator` or `label_columns`): each label's threshold,
chosen on validation, the metrics of label sets and their report files.

A multi-label classifier gives each label its own probability (a sigmoid); a text's
predicted set is the labels whose probability reaches their threshold. The thresholds are
chosen after training on the validation split, each label's the one that maximises its F1
there, and kept in the run folder (`thresholds.json`, {label: threshold}), so predict.py,
the live lab and evaluate.py give the same sets.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, f1_score, hamming_loss, precision_recall_fscore_support

from engine.calibration.reports import write_calibration_reports
from engine.reports import EPSILON, classification_metrics
from run_folder import runs

PER_LABEL_FILE = "per_label.csv"
# The thresholds tried for each label; 0.5 where validation has no example of it.
CANDIDATES = np.round(np.arange(0.05, 0.951, 0.01), 2)
DEFAULT_THRESHOLD = 0.5
HEADLINE = ("micro_f1", "macro_f1", "samples_f1", "subset_accuracy", "hamming_loss", "loss")


def choose_thresholds(labels, probabilities) -> np.ndarray:
    """Each label's threshold (C,): the candidate with the best F1 on (labels, probabilities)
    of the validation split; of equal ones, the closest to 0.5.

    Example:
    >>> labels = np.array([[1, 0], [0, 1], [1, 0], [0, 0]])
    >>> probabilities = np.array([[0.3, 0.1], [0.2, 0.9], [0.4, 0.2], [0.1, 0.3]])
    >>> choose_thresholds(labels, probabilities).tolist()
    [0.3, 0.5]
    """
    labels = np.asarray(labels) > 0
    probabilities = np.asarray(probabilities, dtype=np.float64)
    thresholds = np.full(labels.shape[1], DEFAULT_THRESHOLD)
    for column in range(labels.shape[1]):
        truth = labels[:, column]
        if not truth.any():
            continue
        predicted = probabilities[:, column][:, None] >= CANDIDATES[None, :]  # (N, K)
        true_positives = (predicted & truth[:, None]).sum(0)
        f1 = 2 * true_positives / (predicted.sum(0) + truth.sum())
        best = np.flatnonzero(f1 == f1.max())
        thresholds[column] = CANDIDATES[best[np.argmin(np.abs(CANDIDATES[best] - 0.5))]]
    return thresholds


def predicted_sets(probabilities, thresholds) -> np.ndarray:
    """(N, C) bool: the labels each text is given."""
    return np.asarray(probabilities) >= np.asarray(thresholds)[None, :]


def predicted_names(probabilities, thresholds, class_names) -> list[list[str]]:
    """Each text's set as its labels' names, in class order.

    Example:
    >>> predicted_names(np.array([[0.9, 0.2], [0.1, 0.3]]), [0.5, 0.3], ["a", "b"])
    [['a'], ['b']]
    """
    names = np.asarray(class_names, dtype=object)
    return [list(names[row]) for row in predicted_sets(probabilities, thresholds)]


def set_names(sets, class_names) -> list[str]:
    """Each row of bool `sets` (N, C) as its labels' names joined by "|" ("" for none).

    Example:
    >>> set_names(np.array([[True, True], [False, False]]), ["a", "b"])
    ['a|b', '']
    """
    names = np.asarray(class_names, dtype=object)
    return ["|".join(names[np.asarray(row, dtype=bool)]) for row in sets]


def label_set_metrics(labels, probabilities, thresholds) -> dict:
    """micro, macro and per-example (samples) F1, subset accuracy (the whole set right),
    Hamming loss (the share of wrong label decisions) and the mean binary cross-entropy.

    Example:
    >>> metrics = label_set_metrics(np.array([[1, 0], [1, 1]]),
    ...                             np.array([[0.9, 0.2], [0.8, 0.3]]), [0.5, 0.5])
    >>> metrics["micro_f1"], metrics["subset_accuracy"], metrics["hamming_loss"]
    (0.8, 0.5, 0.25)
    """
    truth = np.asarray(labels) > 0
    predicted = predicted_sets(probabilities, thresholds)
    p = np.clip(np.asarray(probabilities, dtype=np.float64), EPSILON, 1 - EPSILON)
    loss = -(truth * np.log(p) + (~truth) * np.log(1 - p)).mean() if len(truth) else 0.0

    def f1(average, zero_division=0):
        return float(f1_score(truth, predicted, average=average, zero_division=zero_division))

    return {
        "micro_f1": f1("micro"),
        "macro_f1": f1("macro"),
        # A text with no label, given none, is right (sklearn would count it 0).
        "samples_f1": f1("samples", zero_division=1) if len(truth) else 0.0,
        "subset_accuracy": float(accuracy_score(truth, predicted)) if len(truth) else 0.0,
        "hamming_loss": float(hamming_loss(truth, predicted)) if len(truth) else 0.0,
        "loss": float(loss),
        "num_examples": int(len(truth)),
    }


def split_metrics(predictions, class_names, thresholds=None) -> dict:
    """{split: metrics} of {split: (probabilities, labels)}: `classification_metrics`, or
    with `thresholds` (a multi-label run's) `label_set_metrics`."""
    return {
        split: (
            classification_metrics(labels, probabilities, len(class_names))
            if thresholds is None
            else label_set_metrics(labels, probabilities, thresholds)
        )
        for split, (probabilities, labels) in predictions.items()
    }


def scored_splits(predictions, class_names, multi_label, run_dir) -> dict:
    """`split_metrics`, a multi-label run's at thresholds chosen on the validation split
    first and written to `run_dir` (as training and `evaluate.py --calibrate` do)."""
    thresholds = None
    if multi_label:
        thresholds = choose_thresholds(*predictions["validation"][::-1])
        runs.write_thresholds(run_dir, class_names, thresholds)
    return split_metrics(predictions, class_names, thresholds)


def write_label_set_reports(
    output_dir, texts, labels, probabilities, class_names, thresholds, worst=20, temperature=None
) -> dict:
    """Writes metrics.json, per_label.csv (precision, recall, F1, support and threshold of
    each label), predictions.csv (text, true and predicted labels joined by "|", each
    label's probability), worst_mistakes.csv (the `worst` texts with the most wrong
    label decisions) and reliability.png (`engine.calibration`, with the per-label
    `temperature` folded into the model); returns the metrics."""
    output_dir = Path(output_dir)
    metrics = label_set_metrics(labels, probabilities, thresholds)
    metrics.update(
        write_calibration_reports(output_dir, labels, probabilities, temperature, multi_label=True)
    )
    runs.write_json(output_dir / runs.METRICS_FILE, metrics)
    truth = np.asarray(labels) > 0
    predicted = predicted_sets(probabilities, thresholds)
    precision, recall, f1, support = precision_recall_fscore_support(
        truth, predicted, zero_division=0
    )
    pd.DataFrame({
        "label": class_names, "precision": precision, "recall": recall, "f1": f1,
        "support": support, "threshold": thresholds,
    }).to_csv(output_dir / PER_LABEL_FILE, index=False, float_format="%.4f")  # fmt: skip
    table = pd.DataFrame({
        "text": np.asarray(texts, dtype=object),
        "true_labels": set_names(truth, class_names),
        "predicted_labels": set_names(predicted, class_names),
        "wrong_labels": (truth != predicted).sum(axis=1),
    })  # fmt: skip
    for column, name in enumerate(class_names):
        table[f"p({name})"] = np.asarray(probabilities)[:, column]
    table.to_csv(output_dir / runs.PREDICTIONS_FILE, index=False, float_format="%.6f")
    mistakes = table[table.wrong_labels > 0].sort_values("wrong_labels", ascending=False)
    mistakes.head(worst).to_csv(output_dir / "worst_mistakes.csv", index=False, float_format="%.4f")
    return metrics
