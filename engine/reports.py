"""Classification metrics and the report files people read, shared by train.py and evaluate.py.

`classification_metrics` gives the headline numbers of `metrics.json`; `write_reports` adds
the per-class table, the confusion matrix (CSV and PNG), every prediction and the most
confident mistakes; `format_table` and `format_run_summary` print tables through pandas.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from sklearn.metrics import (
    ConfusionMatrixDisplay,
    accuracy_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
)

from engine.calibration.reports import write_calibration_reports
from run_folder import runs

# Keras clips probabilities to this epsilon in its cross-entropy; so do we, so that the
# loss here matches `model.evaluate` on the same data.
EPSILON = 1e-7
# Above this many classes the confusion matrix is drawn without the counts in its cells.
MAX_ANNOTATED_CLASSES = 20


def classification_metrics(labels, probabilities, num_classes):
    """Accuracy, macro and weighted F1 and cross-entropy loss of `probabilities` (N, C).

    Example:

    >>> metrics = classification_metrics(
    ...     np.array([0, 1]), np.array([[0.9, 0.1], [0.4, 0.6]]), num_classes=2)
    >>> metrics["accuracy"], round(metrics["loss"], 4)
    (1.0, 0.3081)
    """
    labels = np.asarray(labels, dtype=np.int64)
    probabilities = np.asarray(probabilities, dtype=np.float64)
    predictions = probabilities.argmax(axis=-1)
    classes = list(range(num_classes))
    picked = np.clip(probabilities[np.arange(len(labels)), labels], EPSILON, 1.0)

    def f1(average):
        return float(
            f1_score(labels, predictions, labels=classes, average=average, zero_division=0)
        )

    return {
        "accuracy": float(accuracy_score(labels, predictions)),
        "macro_f1": f1("macro"),
        "weighted_f1": f1("weighted"),
        "loss": float(-np.log(picked).mean()),
        "num_examples": int(len(labels)),
    }


def write_reports(
    output_dir, texts, labels, probabilities, class_names, worst=20, temperature=None
) -> dict:
    """Writes every report file into the existing folder `output_dir`; returns the metrics.

    Files: metrics.json, per_class.csv, confusion_matrix.csv and .png, predictions.csv
    (text, true and predicted label, probabilities), worst_mistakes.csv (the `worst`
    most confident wrong predictions), and calibration's (`write_calibration_reports`;
    `temperature`: the one folded into the model, for the reliability diagram's "before").
    """
    num_classes = len(class_names)
    metrics = classification_metrics(labels, probabilities, num_classes)
    metrics.update(write_calibration_reports(output_dir, labels, probabilities, temperature))
    runs.write_json(output_dir / runs.METRICS_FILE, metrics)

    predictions = probabilities.argmax(axis=-1)
    classes = list(range(num_classes))
    precision, recall, f1, support = precision_recall_fscore_support(
        labels, predictions, labels=classes, zero_division=0
    )
    pd.DataFrame(
        {
            "class": class_names,
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "support": support,
        }
    ).to_csv(output_dir / "per_class.csv", index=False, float_format="%.4f")

    matrix = confusion_matrix(labels, predictions, labels=classes)
    pd.DataFrame(
        matrix, index=pd.Index(class_names, name="true \\ predicted"), columns=class_names
    ).to_csv(output_dir / "confusion_matrix.csv")
    plot_confusion_matrix(matrix, class_names).savefig(output_dir / "confusion_matrix.png", dpi=120)

    table = pd.DataFrame({
        "text": np.asarray(texts, dtype=object),
        "true_label": [class_names[i] for i in labels],
        "predicted_label": [class_names[i] for i in predictions],
        "probability": probabilities.max(axis=-1),
        "true_label_probability": probabilities[np.arange(len(labels)), labels],
    })  # fmt: skip
    table.to_csv(output_dir / runs.PREDICTIONS_FILE, index=False, float_format="%.6f")
    mistakes = table[table.true_label != table.predicted_label]
    mistakes.sort_values("probability", ascending=False, kind="stable").head(worst).to_csv(
        output_dir / "worst_mistakes.csv", index=False, float_format="%.4f"
    )
    return metrics


def plot_confusion_matrix(matrix, class_names) -> Figure:
    """scikit-learn's confusion matrix display on its own Figure (no pyplot, no display)."""
    size = max(5.0, 0.3 * len(class_names) + 3.0)
    figure = Figure(figsize=(size, size), layout="tight")
    display = ConfusionMatrixDisplay(matrix, display_labels=class_names)
    annotate = len(class_names) <= MAX_ANNOTATED_CLASSES
    display.plot(
        ax=figure.add_subplot(),
        cmap="Blues",
        xticks_rotation="vertical",
        include_values=annotate,
        colorbar=True,
    )
    display.ax_.set_xlabel("predicted")
    display.ax_.set_ylabel("true")
    if not annotate:
        display.ax_.tick_params(labelsize=5)
    return figure


def format_table(rows: list[dict], float_format: str = "{:.4f}") -> str:
    """A plain-text table of `rows` (one dict per row), numbers right-aligned.

    Example:
    >>> print(format_table([{"data": "test", "accuracy": 0.5}]))
    data  accuracy
    test    0.5000
    """
    return pd.DataFrame(rows).to_string(index=False, float_format=float_format.format)


def format_run_summary(metrics: dict, run_dir: Path) -> str:
    """The short table train.py prints at the end: metrics, epochs and where things are."""
    multi_label = "micro_f1" in metrics["test"]
    keys = (
        ["micro_f1", "macro_f1", "subset_accuracy", "loss"]
        if multi_label
        else ["accuracy", "macro_f1", "loss"]
    )
    table = pd.DataFrame(
        {split: [metrics[split][key] for key in keys] for split in ("validation", "test")},
        index=keys,
    )
    files = runs.run_files(run_dir)
    return "\n".join([
        table.to_string(float_format="{:.4f}".format),
        f"epochs: {metrics['epochs']} (best {metrics['best_epoch']})   "
        f"wall time: {metrics['wall_time_s']:.1f} s   parameters: {metrics['num_parameters']:,}",
        f"run folder:   {files['run folder']}/",
        f"model:        {files['model']}  (raw strings in, probabilities out)",
        f"metrics:      {files['metrics']}",
        f"history:      {files['history']}",
        f"tensorboard:  tensorboard --logdir {files['logs']}",
        f"evaluate:     python evaluate.py {files['run folder']}",
    ])  # fmt: skip
