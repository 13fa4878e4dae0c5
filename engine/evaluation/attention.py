"""Attention exports of a finished run, into `RUN_DIR/attention/<source>/`, for evaluate.py.

Each export has its own folder, named after what was exported (the split, the data file's
or the texts file's stem) unless given (`--out`). An existing export is never replaced
unless asked (`overwrite`); then the new one replaces it as a whole or not at all
(`runs.staged_folder`). Every attribution method is stored (`methods` picks fewer), and an
export of a split that `evaluate.py --faithfulness` measured carries its numbers
(`faithfulness_block`). A pruned run's maps sit at its heads' original numbers (`kept_heads`,
from its compress.json), and the viewer shows the run's heads.json, and its tokens.json, data
map and slices, when it has them (`heads_block`, `dataset_panel.dataset_block`).

Example:
>>> # run = saved_run.load_run("runs/default")
>>> # viewer = export_texts_attention(run, [(1, "a wonderful film")], "my.txt",
>>> #                                   export_dir(run.run_dir, "my"))
"""

import json
from pathlib import Path

import numpy as np

from engine import runs
from engine.evaluation import dataset_panel
from engine.evaluation.heads import HEADS_FILE
from inspection.attention_export import export_attention
from inspection.attention_file.format import VIEWER_FILENAME
from inspection.attention_file.reader import load_attention
from inspection.attention_tokens import ATTENTION_BATCH_SIZE
from inspection.methods.heads import STATISTICS

# What meta.json keeps of each method in faithfulness.json: the two ERASER measures.
FAITHFULNESS_MEASURES = ("comprehensiveness", "sufficiency")
# Per head, what the viewer shows of heads.json (docs/heads.md says what each means).
HEAD_MEASURES = ("importance", "ablation_accuracy_drop", "ablation_loss_increase",
                 "ablation_loss_change") + STATISTICS
# Measured since 2026-12-03: heads.json files written before lack it (shown as missing).
NEWER_MEASURES = ("ablation_loss_change",)


class ExportError(ValueError):
    """Bad example ids, an empty selection, an export in the way or an unreadable
    faithfulness file; the message is one line."""


def export_dir(run_dir, source, out_dir=None) -> Path:
    """Where the export of `source` goes: `out_dir`, or `RUN_DIR/attention/<source>`."""
    if out_dir is not None:
        return Path(out_dir)
    return Path(run_dir) / runs.ATTENTION_DIR / source


def check_export_target(path, overwrite=False) -> None:
    """An existing export (or anything else) at `path` is an ExportError unless `overwrite`."""
    path = Path(path)
    if path.is_file():
        raise ExportError(f"{path} is a file; give --out a folder to write the export to")
    if path.exists() and not overwrite:
        raise ExportError(f"{path} already holds an export: pass --overwrite to replace it, "
                          "or --out DIR to write this one elsewhere")


def export_run_attention(run, texts, out_dir, true_labels=None,
                         example_ids=None, run_info=None, overwrite=False,
                         viewer_examples=runs.VIEWER_EXAMPLES,
                         heatmap_examples=runs.HEATMAP_EXAMPLES,
                         methods=None, faithfulness=None, verbose=0):
    """Writes the attention of `texts` to `out_dir` (see `export_dir`).

    Args:
        run: a `saved_run.Run`.
        texts: raw strings.
        true_labels: optional label indices; None when unknown.
        example_ids: optional ids (default "00000", "00001", ...).
        run_info: extra entries for meta.json's `run_info` (run_dir and model are added).
        overwrite: replace an export already in `out_dir` (else an ExportError).
        viewer_examples: the first examples that go into index.html.
        heatmap_examples: the first examples that get PNG heatmaps and BertViz JSON.
        methods: the attribution methods to store (`inspection.methods.attribution.METHODS`);
            None: all.
        faithfulness: the methods' faithfulness on these texts (`faithfulness_block`), or
            None.
        verbose: 1 shows a progress bar.

    Returns:
        The `AttentionFile` of the export (see `load_attention`).
    """
    texts = [str(text) for text in texts]
    out_dir = Path(out_dir)
    check_export_target(out_dir, overwrite)
    info = {"run_dir": str(run.run_dir), "model": str(run.run_dir / runs.MODEL_FILE),
            **(run_info or {})}
    vectorizer, classifier = run.parts
    kept_heads = kept_heads_of(run.run_dir)
    with runs.staged_folder(out_dir) as staging:
        export_attention(
            classifier, vectorizer, texts, staging, run.class_names,
            true_labels=true_labels, methods=methods, faithfulness=faithfulness,
            pooling=run.pooling, example_ids=example_ids, batch_size=ATTENTION_BATCH_SIZE,
            run_info=info, max_rendered_examples=heatmap_examples,
            max_viewer_examples=viewer_examples, kept_heads=kept_heads,
            heads=heads_block(run.run_dir, kept_heads or classifier.encoder.head_counts),
            dataset=_dataset_block(run.run_dir, info.get("data")),
            verbose=verbose,
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


def export_evaluation_attention(run, report, out_dir, count=None, ids=None, **options) -> Path:
    """Exports some examples an evaluation just scored; returns the viewer's path.

    `options`: those of `export_run_attention` (overwrite, viewer_examples, ...).

    The example ids are the examples' positions in the evaluated data ("00003" is
    example 3).
    The faithfulness of `RUN_DIR/eval/<data>/faithfulness.json`, when there, goes with them.
    """
    indices = select_examples(len(report.texts), report.data_name, count, ids)
    faithfulness = faithfulness_block(
        run.run_dir / runs.EVAL_DIR / report.data_name / runs.FAITHFULNESS_FILE)
    width = max(5, len(str(len(report.texts) - 1)))
    export = export_run_attention(
        run,
        np.asarray(report.texts, dtype=object)[indices],
        out_dir,
        true_labels=report.labels[indices],
        example_ids=[str(index).zfill(width) for index in indices],
        run_info={"source": "evaluate.py", "data": report.data_name},
        faithfulness=faithfulness,
        **options,
    )
    export.close()
    return export.directory / VIEWER_FILENAME


def export_texts_attention(run, numbered_texts, source, out_dir, **options) -> Path:
    """Exports the attention of unlabelled texts (a texts file); returns the viewer's path.

    `numbered_texts`: (line number, text) pairs; the example ids are the line numbers.
    """
    width = max(5, len(str(numbered_texts[-1][0])))
    export = export_run_attention(
        run, [text for _, text in numbered_texts], out_dir,
        example_ids=[str(line).zfill(width) for line, _ in numbered_texts],
        run_info={"source": "evaluate.py", "data": source}, **options)
    export.close()
    return export.directory / VIEWER_FILENAME


def faithfulness_block(path):
    """What an export's meta.json keeps of a faithfulness file (`evaluate.py --faithfulness`):
    per method the comprehensiveness and sufficiency means with their 95% intervals, and
    the best method; None when there is no file at `path`.

    Example:
    >>> faithfulness_block(Path("runs/default/eval/nothere/faithfulness.json")) is None
    True
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        measured = json.loads(path.read_text(encoding="utf-8"))
        methods = {
            method: {measure: {"mean": float(numbers[measure]["mean"]),
                               "ci95": [float(bound) for bound in numbers[measure]["ci95"]]}
                     for measure in FAITHFULNESS_MEASURES}
            for method, numbers in measured["methods"].items()}
        # The eval folder it sits in is the split (or data file) it measured.
        block = {"source": str(path), "split": path.parent.name,
                 "examples": int(measured["examples"]),
                 "bins_percent": list(measured["bins_percent"]),
                 "best_method": str(measured["best_method"]), "methods": methods}
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ExportError(
            f"{path} is not a faithfulness file of evaluate.py --faithfulness "
            f"({type(error).__name__}: {error}); measure again: python evaluate.py RUN_DIR "
            "--faithfulness 500") from None
    if block["best_method"] not in methods:
        raise ExportError(f"{path}: best_method {block['best_method']!r} is none of its "
                          f"methods {sorted(methods)}; measure again with --faithfulness")
    return block


def kept_heads_of(run_dir):
    """Per layer, the original numbers of the heads a pruned run kept (its compress.json's
    `kept_heads`); None for a run that was not pruned (an int8 copy's compress.json has
    no `kept_heads`).

    Example:
    >>> kept_heads_of(Path("runs/not_pruned")) is None
    True
    """
    path = Path(run_dir) / runs.COMPRESS_FILE
    if not path.is_file():
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        if report.get("int8") and "kept_heads" not in report:
            return None
        return [[int(head) for head in heads] for heads in report["kept_heads"]]
    except (ValueError, KeyError, TypeError) as error:
        raise ExportError(f"{path} is not a compress.json of compress.py "
                          f"({type(error).__name__}: {error}); prune the run again") from None


def heads_block(run_dir, heads_per_layer):
    """What the viewer shows of a run's heads.json (`evaluate.py --heads`): the validation
    split's, else the first other split's that has one; None when no split has.

    Args:
        run_dir: the run folder.
        heads_per_layer: the model's heads: per layer a count, or the list of their numbers
            (a pruned run's `kept_heads`); heads.json must hold exactly those.

    Returns:
        {"source", "split", "examples", "spearman_importance_ablation", "measures",
        "heads": [{"layer", "head", <measure>: float or None}, ...]}, or None.
    """
    folder = Path(run_dir) / runs.EVAL_DIR
    paths = sorted(folder.glob(f"*/{HEADS_FILE}"),
                   key=lambda path: (path.parent.name != runs.HEADS_SPLIT, path.parent.name))
    if not paths:
        return None
    path = paths[0]
    try:
        measured = json.loads(path.read_text(encoding="utf-8"))
        heads = [{"layer": int(head["layer"]), "head": int(head["head"]),
                  **{name: _finite_or_none(head.get(name) if name in NEWER_MEASURES
                                           else head[name]) for name in HEAD_MEASURES}}
                 for head in measured["heads"]]
        block = {"source": str(path), "split": path.parent.name,
                 "examples": int(measured["examples"]),
                 "spearman_importance_ablation": _finite_or_none(
                     measured["spearman_importance_ablation"]),
                 "measures": list(HEAD_MEASURES), "heads": heads}
    except (ValueError, KeyError, TypeError) as error:
        raise ExportError(f"{path} is not a heads file of evaluate.py --heads "
                          f"({type(error).__name__}: {error}); measure again: python "
                          "evaluate.py RUN_DIR --split validation --heads 500") from None
    expected = {(layer, head) for layer, heads in enumerate(heads_per_layer)
                for head in (range(heads) if isinstance(heads, int) else heads)}
    found = {(head["layer"], head["head"]) for head in heads}
    if found != expected or len(heads) != len(found):
        raise ExportError(f"{path} measured other heads than the model has ({len(found)} "
                          f"(layer, head) pairs for its {len(expected)}); measure again: "
                          f"python evaluate.py {run_dir} --split {path.parent.name} --heads 500")
    return block


def _dataset_block(run_dir, data_name):
    """The viewer's Dataset panel (`dataset_panel.dataset_block`), its errors an
    ExportError."""
    try:
        return dataset_panel.dataset_block(run_dir, data_name)
    except ValueError as error:
        raise ExportError(str(error)) from None


def _finite_or_none(value):
    """A float, or None for a missing or non-finite one (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None
