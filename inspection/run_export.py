"""Attention exports of a finished run, into `RUN_DIR/attention/`, for evaluate.py.

`export_run_attention` runs `export_attention` with the run's attention model and
vectoriser and writes the folder through `runs.staged_folder`, so an export replaces the
previous one as a whole or not at all.

Example:
>>> # run = runs.load_run("runs/default")
>>> # viewer = export_texts_attention(run, ["a wonderful film"], source="cli")
"""

from pathlib import Path

import numpy as np

import runs
from inspection.attention_file import VIEWER_FILENAME, load_attention
from inspection.attention_tokens import ATTENTION_BATCH_SIZE
from inspection.export import export_attention
from models import predict_texts


class ExportError(ValueError):
    """Bad example ids or an empty selection; the message is one line."""


def export_run_attention(run, texts, probabilities=None, true_labels=None, example_ids=None,
                         run_info=None, out_dir=None, max_rendered_examples=8, verbose=0):
    """Writes the attention of `texts` to `RUN_DIR/attention/` (or `out_dir`).

    Args:
        run: a `runs.Run`.
        texts: raw strings.
        probabilities: the fast path's (N, C) probabilities when already computed (by the
            evaluation); None computes them with the run's model.
        true_labels: optional label indices; None when unknown.
        example_ids: optional ids (default "00000", "00001", ...).
        run_info: extra entries for meta.json's `run_info` (run_dir and model are added).
        out_dir: where to write; default `RUN_DIR/attention`.
        max_rendered_examples: examples that get PNG heatmaps and BertViz JSON.
        verbose: 1 shows a progress bar.

    Returns:
        The `AttentionFile` of the export (see `load_attention`).
    """
    texts = [str(text) for text in texts]
    out_dir = Path(out_dir) if out_dir is not None else run.run_dir / runs.ATTENTION_DIR
    if probabilities is None:
        probabilities = predict_texts(run.model, texts)
    info = {"run_dir": str(run.run_dir), "model": str(run.run_dir / runs.MODEL_FILE),
            **(run_info or {})}
    vectorizer, _ = run.parts
    with runs.staged_folder(out_dir) as staging:
        export_attention(
            run.attention_model, vectorizer, texts, staging, run.class_names,
            true_labels=true_labels, fast_path_probabilities=probabilities,
            pooling=run.pooling, example_ids=example_ids, batch_size=ATTENTION_BATCH_SIZE,
            run_info=info, max_rendered_examples=max_rendered_examples, verbose=verbose,
        ).close()
    return load_attention(out_dir)


def check_example_ids(ids) -> list[int]:
    """The ids as ints; a negative or repeated id is an ExportError."""
    ids = [int(example_id) for example_id in ids]
    for example_id in ids:
        if example_id < 0:
            raise ExportError(
                f"--export-attention-ids: {example_id} is not an example id; ids are "
                "positions in the evaluated data, from 0"
            )
    repeated = sorted({example_id for example_id in ids if ids.count(example_id) > 1})
    if repeated:
        raise ExportError(f"--export-attention-ids: {repeated[0]} is given twice; "
                          "give each id once")
    return ids


def select_examples(num_examples, data_name, count=None, ids=None) -> np.ndarray:
    """Indices of the examples to export: the first `count`, or the given `ids`."""
    if num_examples == 0:
        raise ExportError(f"{data_name} has no examples to export")
    if not ids:
        return np.arange(min(count, num_examples))
    for example_id in check_example_ids(ids):
        if example_id >= num_examples:
            raise ExportError(
                f"--export-attention-ids: {example_id} is not an example of '{data_name}' "
                f"({num_examples} examples): ids go from 0 to {num_examples - 1}"
            )
    return np.array(ids)


def export_evaluation_attention(run, report, count=None, ids=None, verbose=0) -> Path:
    """Exports some examples an evaluation just scored; returns the viewer's path.

    The probabilities checked against the attention path are the evaluation's own; the
    example ids are the examples' positions in the evaluated data ("00003" is example 3).
    """
    indices = select_examples(len(report.texts), report.data_name, count, ids)
    width = max(5, len(str(len(report.texts) - 1)))
    export = export_run_attention(
        run,
        np.asarray(report.texts, dtype=object)[indices],
        probabilities=report.probabilities[indices],
        true_labels=report.labels[indices],
        example_ids=[str(index).zfill(width) for index in indices],
        run_info={"source": "evaluate.py", "data": report.data_name},
        verbose=verbose,
    )
    export.close()
    return export.directory / VIEWER_FILENAME


def export_texts_attention(run, texts, source, verbose=0) -> Path:
    """Exports the attention of unlabelled texts (a texts file); returns the viewer's path."""
    export = export_run_attention(run, texts, verbose=verbose,
                                  run_info={"source": "evaluate.py", "data": source})
    export.close()
    return export.directory / VIEWER_FILENAME
