"""Predictions of a saved run on raw texts, tokens ranked by attention rollout, attention export.

`predict.py` and `evaluate.py --export-attention` are thin shells over this module.

Example:

>>> # run = load_run("runs/default")
>>> # [p.predicted_label for p in predict(run, ["a wonderful film"], explain=True)]
>>> # export_run_attention(run, texts, probabilities=probabilities)  # RUN_DIR/attention/
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import numpy as np

# TensorFlow is imported only by the functions that need it, so that text errors are
# reported at once.

ATTENTION_DIR = "attention"
VIEWER_FILE = "index.html"
PADDING_ID = 0
# Per forward pass of the attention model: its scores are (B, layers, heads, L, L) float32,
# 64 MiB for 32 examples of 256 tokens with 2 layers of 4 heads.
ATTENTION_BATCH_SIZE = 32


class PredictionError(ValueError):
    """Bad texts or text file given to predict.py / evaluate.py; the message is one line."""


@dataclasses.dataclass
class LoadedRun:
    """A finished run's end-to-end model, its parts, class names and pooling."""

    run_dir: Path
    model: object
    class_names: list
    vectorizer: object
    classifier: object
    pooling: str
    _attention_model: object = dataclasses.field(default=None, repr=False)

    @property
    def attention_model(self):
        """The classifier's attention sibling (same weights), built on first use."""
        if self._attention_model is None:
            from models import build_attention_model

            self._attention_model = build_attention_model(self.classifier)
        return self._attention_model


@dataclasses.dataclass
class Prediction:
    """One text's prediction; `tokens` is None unless explained.

    `tokens` lists `(token, position, importance)` of the real tokens, most important
    first; importance is the token's share of the rollout (see `token_importance`), the
    class token of `pooling: cls` left out.
    """

    text: str
    predicted_label: str
    probabilities: dict
    tokens: list | None = None


def load_run(run_dir: str | Path) -> LoadedRun:
    """Loads a finished run for prediction.

    Raises:
        EvaluationError: missing run folder, `model.keras`, `labels.json`, or a model that
            cannot be loaded or is not an end-to-end model.
    """
    from config import ConfigError
    from evaluation import EvaluationError, load_run_model
    from models import get_model_parts
    from training import CONFIG_FILE, load_run_config

    run_dir = Path(run_dir)
    model, class_names = load_run_model(run_dir)
    try:
        vectorizer, classifier = get_model_parts(model)
    except ValueError as error:
        raise EvaluationError(f"{run_dir / 'model.keras'}: {error}") from None
    try:
        pooling = load_run_config(run_dir).model.pooling
    except ConfigError as error:
        raise EvaluationError(f"{run_dir / CONFIG_FILE}: cannot read the run's config "
                              f"({error})") from None
    return LoadedRun(run_dir, model, class_names, vectorizer, classifier, pooling)


def check_texts(texts) -> list[str]:
    """The texts as a list of strings; raises PredictionError on no text or an empty one."""
    texts = [str(text) for text in texts]
    if not texts:
        raise PredictionError("no texts given: pass texts as arguments or --file FILE")
    for index, text in enumerate(texts):
        if not text.strip():
            raise PredictionError(
                f"text {index + 1} is empty: every text needs at least one word"
            )
    return texts


def read_texts_file(path: str | Path) -> list[str]:
    """One text per line (UTF-8); blank lines are skipped. "-" reads standard input.

    Raises:
        PredictionError: the file is missing, unreadable, not UTF-8 or has no text.
    """
    import sys

    try:
        if str(path) == "-":
            content = sys.stdin.read()
        else:
            content = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PredictionError(f"{path}: not a UTF-8 text file; save it as UTF-8") from None
    except OSError as error:
        raise PredictionError(f"{path}: cannot read the texts file ({error.strerror})") from None
    texts = [line.strip() for line in content.splitlines() if line.strip()]
    if not texts:
        raise PredictionError(f"{path}: no texts in the file; write one text per line")
    return texts


def predict(run: LoadedRun, texts, explain: bool = False, top: int | None = 10,
            batch_size: int = 256) -> list[Prediction]:
    """Predicts every text on the fast path; `explain` adds tokens ranked by rollout.

    Args:
        run: from `load_run`.
        texts: raw strings.
        explain: also rank each text's tokens by attention rollout importance (one pass of
            the attention model; texts longer than the run's sequence length are cut).
        top: keep the `top` most important tokens; None keeps all.
        batch_size: texts per prediction batch.
    """
    from evaluation import predict_texts

    texts = check_texts(texts)
    probabilities = predict_texts(run.model, texts, batch_size)  # (N, C)
    rankings = _rank_tokens(run, texts, top) if explain else [None] * len(texts)
    return [
        Prediction(
            text=text,
            predicted_label=run.class_names[int(np.argmax(row))],
            probabilities={name: float(p) for name, p in zip(run.class_names, row)},
            tokens=ranking,
        )
        for text, row, ranking in zip(texts, probabilities, rankings)
    ]


def _rank_tokens(run: LoadedRun, texts: list[str], top: int | None) -> list[list]:
    import tensorflow as tf

    from inspection.rollout import token_importance

    vocabulary = run.vectorizer.get_vocabulary()
    class_token_count = 1 if run.pooling == "cls" else 0
    rankings = []
    for start in range(0, len(texts), ATTENTION_BATCH_SIZE):
        batch = texts[start:start + ATTENTION_BATCH_SIZE]
        token_ids = np.asarray(run.vectorizer(tf.constant(batch)))  # (B, L)
        outputs = run.attention_model(token_ids, training=False)
        # (B, layers, heads, A, A), A = L (+ 1 for the class token)
        scores = np.stack([np.asarray(layer) for layer in outputs["attention_scores"]], axis=1)
        for ids, example_scores in zip(token_ids, scores):
            is_real = ids != PADDING_ID  # (L,)
            positions = np.flatnonzero(is_real)
            if class_token_count:
                is_real = np.concatenate([[True], is_real])  # (L + 1,)
            trimmed = example_scores[:, :, is_real][:, :, :, is_real]  # (layers, heads, T, T)
            importance = token_importance(trimmed, run.pooling)[class_token_count:]  # (T,)
            order = np.argsort(-importance, kind="stable")[:top]
            rankings.append([
                (vocabulary[ids[positions[i]]], int(positions[i]), float(importance[i]))
                for i in order
            ])
    return rankings


def format_predictions(predictions: list[Prediction], max_classes: int = 10) -> str:
    """A small table per text: predicted label, class probabilities, ranked tokens."""
    lines = []
    for number, prediction in enumerate(predictions, start=1):
        text = prediction.text if len(prediction.text) <= 100 else prediction.text[:97] + "..."
        ranked = sorted(prediction.probabilities.items(), key=lambda item: -item[1])
        lines.append(f"[{number}] {text}")
        lines.append(f"    predicted: {prediction.predicted_label} ({ranked[0][1]:.4f})")
        width = max(len(name) for name, _ in ranked[:max_classes])
        lines.append(f"    {'class'.ljust(width)}  probability")
        lines += [f"    {name.ljust(width)}  {p:11.4f}" for name, p in ranked[:max_classes]]
        if len(ranked) > max_classes:
            lines.append(f"    ({len(ranked) - max_classes} more classes; --json lists all)")
        if prediction.tokens is not None:
            lines.append("    tokens by rollout importance:")
            token_width = max([len(token) for token, _, _ in prediction.tokens] + [5])
            lines.append(f"    {'token'.ljust(token_width)}  position  importance")
            lines += [f"    {token.ljust(token_width)}  {position:8d}  {importance:10.4f}"
                      for token, position, importance in prediction.tokens]
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def predictions_to_json(run: LoadedRun, predictions: list[Prediction]) -> dict:
    """A JSON-serialisable document of the predictions (what `predict.py --json` prints)."""
    items = []
    for prediction in predictions:
        item = {
            "text": prediction.text,
            "predicted_label": prediction.predicted_label,
            "probabilities": prediction.probabilities,
        }
        if prediction.tokens is not None:
            item["tokens"] = [
                {"token": token, "position": position, "importance": importance}
                for token, position, importance in prediction.tokens
            ]
        items.append(item)
    return {"run_dir": str(run.run_dir), "class_names": run.class_names,
            "pooling": run.pooling, "predictions": items}


def export_run_attention(run: LoadedRun, texts, probabilities=None, true_labels=None,
                         example_ids=None, run_info=None, out_dir=None,
                         max_rendered_examples: int = 8, verbose: int = 0):
    """Writes the attention of `texts` to `RUN_DIR/attention/` with `export_attention`.

    The export is written under a temporary name and replaces the previous one as a whole.

    Args:
        run: from `load_run`.
        texts: raw strings.
        probabilities: the fast path's (N, C) probabilities when already computed (e.g. by
            the evaluation); None computes them with the run's model.
        true_labels: optional label indices; None when unknown.
        example_ids: optional ids (default "00000", "00001", ...).
        run_info: extra entries for meta.json's `run_info` (run_dir and pooling are added).
        out_dir: where to write; default `RUN_DIR/attention`.
        max_rendered_examples: examples that get PNG heatmaps and BertViz JSON.
        verbose: 1 shows a progress bar.

    Returns:
        The `AttentionFile` of the export (see `load_attention`).
    """
    from evaluation import predict_texts
    from inspection import export_attention, load_attention
    from training import PARTIAL_SUFFIX

    texts = check_texts(texts)
    out_dir = Path(out_dir) if out_dir is not None else run.run_dir / ATTENTION_DIR
    if probabilities is None:
        probabilities = predict_texts(run.model, texts)
    staging = out_dir.with_name(out_dir.name + PARTIAL_SUFFIX)
    if staging.exists():
        shutil.rmtree(staging)
    info = {"run_dir": str(run.run_dir), "model": str(run.run_dir / "model.keras"),
            **(run_info or {})}
    export = export_attention(
        run.attention_model, run.vectorizer, texts, staging, run.class_names,
        true_labels=true_labels, fast_path_probabilities=probabilities, pooling=run.pooling,
        example_ids=example_ids, batch_size=ATTENTION_BATCH_SIZE, run_info=info,
        max_rendered_examples=max_rendered_examples, verbose=verbose,
    )
    export.close()
    # Replace the previous export as a whole, never file by file.
    if out_dir.exists():
        shutil.rmtree(out_dir)
    os.replace(staging, out_dir)
    return load_attention(out_dir)


def select_examples(num_examples: int, data_name: str, count: int | None = None,
                    ids=None) -> np.ndarray:
    """Indices of the examples to export: the first `count`, or the given `ids`.

    Raises:
        PredictionError: an id outside `0..num_examples - 1`, a repeated id, or no example.
    """
    if num_examples == 0:
        raise PredictionError(f"{data_name} has no examples to export")
    if ids is None or len(ids) == 0:
        return np.arange(min(count, num_examples))
    ids = check_example_ids(ids)
    for example_id in ids:
        if example_id >= num_examples:
            raise PredictionError(
                f"--export-attention-ids: {example_id} is not an example of '{data_name}' "
                f"({num_examples} examples): ids go from 0 to {num_examples - 1}"
            )
    return np.array(ids)


def check_example_ids(ids) -> list[int]:
    """The ids as ints; raises PredictionError on a negative or repeated id."""
    ids = [int(example_id) for example_id in ids]
    for example_id in ids:
        if example_id < 0:
            raise PredictionError(
                f"--export-attention-ids: {example_id} is not an example id; ids are "
                "positions in the evaluated data, from 0"
            )
    repeated = sorted({example_id for example_id in ids if ids.count(example_id) > 1})
    if repeated:
        raise PredictionError(f"--export-attention-ids: {repeated[0]} is given twice; "
                              "give each id once")
    return ids


def export_evaluation_attention(report, count: int | None = None, ids=None,
                                verbose: int = 0) -> Path:
    """Exports the attention of some examples an `evaluate_run` report just scored.

    The probabilities checked against the attention path are the evaluation's own; the
    example ids are the examples' positions in the evaluated data ("00003" is example 3).

    Returns:
        The path of the viewer, `RUN_DIR/attention/index.html`.
    """
    run = load_run(report.run_dir)
    indices = select_examples(len(report.texts), report.data_name, count, ids)
    width = max(5, len(str(len(report.texts) - 1)))
    export = export_run_attention(
        run,
        [str(text) for text in np.asarray(report.texts, dtype=object)[indices]],
        probabilities=report.probabilities[indices],
        true_labels=report.labels[indices],
        example_ids=[str(index).zfill(width) for index in indices],
        run_info={"source": "evaluate.py", "data": report.data_name},
        verbose=verbose,
    )
    export.close()
    return export.directory / VIEWER_FILE


def export_texts_attention(run_dir: str | Path, texts, source: str, verbose: int = 0) -> Path:
    """Exports the attention of unlabelled texts (e.g. a texts file) of one run.

    Returns:
        The path of the viewer, `RUN_DIR/attention/index.html`.
    """
    run = load_run(run_dir)
    export = export_run_attention(run, texts, run_info={"source": "evaluate.py", "data": source},
                                  verbose=verbose)
    export.close()
    return export.directory / VIEWER_FILE
