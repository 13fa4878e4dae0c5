"""Evaluates a saved run's `model.keras` on a split or on labelled files, and writes reports.

For each evaluated data set, `RUN_DIR/eval/<split or file stem>/` receives:
`metrics.json`, `per_class.csv` (precision/recall/F1/support), `confusion_matrix.csv` and
`.png`, `predictions.csv` (text, true label, predicted label, probability) and
`worst_mistakes.csv` (the most confident wrong predictions). The folder is written under a
temporary name and renamed when complete.

Example:

>>> # report = evaluate_run("runs/default", split="test")
>>> # report.metrics["accuracy"], report.output_dir
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import numpy as np

from reports import classification_metrics
from training import LABELS_FILE, MODEL_FILE, PARTIAL_SUFFIX, write_json

EVAL_DIR = "eval"


class EvaluationError(ValueError):
    """A missing or unreadable run folder or model; the message is one line."""


@dataclasses.dataclass
class EvaluationReport:
    run_dir: Path
    data_name: str
    output_dir: Path
    metrics: dict
    # What was evaluated, for exports that reuse the evaluation (evaluate.py --export-attention).
    texts: np.ndarray | None = dataclasses.field(default=None, repr=False)
    labels: np.ndarray | None = dataclasses.field(default=None, repr=False)
    probabilities: np.ndarray | None = dataclasses.field(default=None, repr=False)


def load_run_model(run_dir: str | Path):
    """Returns `(model, class_names)` of a finished run, loaded in safe mode.

    Raises:
        EvaluationError: the folder, `model.keras` or `labels.json` is missing or unreadable.
    """
    from models import load_end_to_end_model

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        partial = run_dir.with_name(run_dir.name + PARTIAL_SUFFIX)
        hint = (
            f"; {partial} is an unfinished run: rerun its train.py command to finish it"
            if partial.is_dir()
            else ""
        )
        raise EvaluationError(f"{run_dir}: no such run folder{hint}")
    model_path = run_dir / MODEL_FILE
    if not model_path.is_file():
        raise EvaluationError(f"{model_path}: missing; is {run_dir} a finished train.py run?")
    labels_path = run_dir / LABELS_FILE
    try:
        class_names = json.loads(labels_path.read_text())
    except (OSError, ValueError) as error:
        raise EvaluationError(f"{labels_path}: cannot read the label names ({error})") from None
    try:
        model = load_end_to_end_model(model_path)
    except Exception as error:  # Corrupt zips, bad JSON and unknown classes raise many types.
        reason = (str(error).strip().splitlines() or [""])[0][:200]
        raise EvaluationError(
            f"{model_path}: cannot load the model ({type(error).__name__}: {reason})"
        ) from None
    return model, list(class_names)


def load_split(run_dir: str | Path, split: str, class_names: list[str]):
    """(texts, labels) of a run's validation or test split, rebuilt from its saved config."""
    from data import DataError, load_text_splits
    from training import data_specs, load_run_config

    config = load_run_config(run_dir)
    dataset_spec, _ = data_specs(config)
    splits = load_text_splits(dataset_spec)
    if list(splits.class_names) != class_names:
        raise DataError(
            f"{run_dir}: the dataset's classes no longer match the run's labels.json; "
            "evaluate with --data FILE instead"
        )
    return getattr(splits, split)


def load_labelled_file(path: str | Path, class_names: list[str], text_column: str,
                       label_column: str):
    """(texts, label ids) of a CSV/TSV/JSONL/Parquet file whose labels are class names."""
    from data import DataError, load_file_split

    texts, label_names = load_file_split(path, text_column, label_column)
    ids = {name: index for index, name in enumerate(class_names)}
    unknown = sorted({str(label) for label in label_names} - set(ids))
    if unknown:
        raise DataError(
            f"{path}: column '{label_column}' has labels {unknown[:5]} that the model does not "
            f"know (its classes: {', '.join(class_names[:10])}"
            f"{', ...' if len(class_names) > 10 else ''})"
        )
    return texts, np.array([ids[str(label)] for label in label_names], dtype=np.int64)


def predict_texts(model, texts, batch_size: int = 256) -> np.ndarray:
    """Class probabilities `(N, C)` of raw strings."""
    import tensorflow as tf

    texts = np.asarray(texts, dtype=object).astype(str)
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(batch_size)
    return np.asarray(model.predict(dataset, verbose=0), dtype=np.float32)


def write_reports(output_dir: Path, texts, labels, probabilities, class_names,
                  worst: int = 20) -> dict:
    """Writes every report file into `output_dir` (created) and returns the metrics."""
    import pandas as pd
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    output_dir.mkdir(parents=True)
    num_classes = len(class_names)
    metrics = classification_metrics(labels, probabilities, num_classes)
    write_json(output_dir / "metrics.json", metrics)

    predictions = probabilities.argmax(axis=-1)
    classes = list(range(num_classes))
    precision, recall, f1, support = precision_recall_fscore_support(
        labels, predictions, labels=classes, zero_division=0
    )
    pd.DataFrame(
        {"class": class_names, "precision": precision, "recall": recall, "f1": f1,
         "support": support}
    ).to_csv(output_dir / "per_class.csv", index=False, float_format="%.4f")

    matrix = confusion_matrix(labels, predictions, labels=classes)
    pd.DataFrame(
        matrix,
        index=pd.Index(class_names, name="true \\ predicted"),
        columns=class_names,
    ).to_csv(output_dir / "confusion_matrix.csv")
    _plot_confusion_matrix(matrix, class_names, output_dir / "confusion_matrix.png")

    table = pd.DataFrame(
        {
            "text": np.asarray(texts, dtype=object),
            "true_label": [class_names[i] for i in labels],
            "predicted_label": [class_names[i] for i in predictions],
            "probability": probabilities.max(axis=-1),
            "true_label_probability": probabilities[np.arange(len(labels)), labels],
        }
    )
    table.to_csv(output_dir / "predictions.csv", index=False, float_format="%.4f")
    mistakes = table[table.true_label != table.predicted_label]
    mistakes.sort_values("probability", ascending=False, kind="stable").head(worst).to_csv(
        output_dir / "worst_mistakes.csv", index=False, float_format="%.4f"
    )
    return metrics


def _plot_confusion_matrix(matrix, class_names, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # Files only: no display on servers and CI.
    import matplotlib.pyplot as plt

    size = max(5.0, 0.3 * len(class_names) + 3.0)
    figure, axes = plt.subplots(figsize=(size, size))
    image = axes.imshow(matrix, cmap="Blues")
    ticks = np.arange(len(class_names))
    font = 8 if len(class_names) <= 20 else 5
    axes.set_xticks(ticks, class_names, rotation=90, fontsize=font)
    axes.set_yticks(ticks, class_names, fontsize=font)
    axes.set_xlabel("predicted")
    axes.set_ylabel("true")
    if len(class_names) <= 20:
        threshold = matrix.max() / 2 if matrix.size else 0
        for (row, column), count in np.ndenumerate(matrix):
            color = "white" if count > threshold else "black"
            axes.text(column, row, str(count), ha="center", va="center", color=color, fontsize=7)
    figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def evaluate_run(run_dir: str | Path, split: str = "test", data_files=(), batch_size: int = 256,
                 worst: int = 20) -> list[EvaluationReport]:
    """Evaluates one run on `split`, or on each of `data_files` when given.

    Raises:
        EvaluationError: missing or unreadable run folder or model.
        DataError: the data cannot be loaded or has labels the model does not know.
    """
    from training import load_run_config

    run_dir = Path(run_dir)
    model, class_names = load_run_model(run_dir)
    if data_files:
        dataset = load_run_config(run_dir).dataset
        sources = [
            (Path(path).stem, lambda path=path: load_labelled_file(
                path, class_names, dataset.text_column, dataset.label_column))
            for path in data_files
        ]
    else:
        sources = [(split, lambda: load_split(run_dir, split, class_names))]

    reports = []
    for name, load in sources:
        texts, labels = load()
        probabilities = predict_texts(model, texts, batch_size)
        output_dir = run_dir / EVAL_DIR / name
        staging = output_dir.with_name(name + PARTIAL_SUFFIX)
        if staging.exists():
            shutil.rmtree(staging)
        metrics = write_reports(staging, texts, labels, probabilities, class_names, worst)
        # Replace the previous report of this data as a whole, never file by file.
        if output_dir.exists():
            shutil.rmtree(output_dir)
        os.replace(staging, output_dir)
        reports.append(
            EvaluationReport(run_dir, name, output_dir, metrics, texts, labels, probabilities)
        )
    return reports


def format_reports(reports: list[EvaluationReport]) -> str:
    """One row per (run, data): the headline table, side by side when there are several."""
    keys = ("accuracy", "macro_f1", "weighted_f1", "loss", "num_examples")
    rows = [("run", "data", *keys)]
    for report in reports:
        values = [
            f"{report.metrics[key]:.4f}" if isinstance(report.metrics[key], float)
            else str(report.metrics[key])
            for key in keys
        ]
        rows.append((str(report.run_dir), report.data_name, *values))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            cell.ljust(width) if i < 2 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.append("")
    lines += [f"reports: {report.output_dir}/" for report in reports]
    return "\n".join(lines)
