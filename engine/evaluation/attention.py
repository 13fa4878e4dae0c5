"""Attention exports of a finished run, into `RUN_DIR/attention/<source>/`, for evaluate.py.

Each export has its own folder, named after what was exported (the split, the data file's
or the texts file's stem) unless given (`--out`). An existing export is never replaced
unless asked (`overwrite`); then the new one replaces it as a whole or not at all
(`runs.staged_folder`). Every attribution method is stored (`methods` picks fewer), and an
export of a split that `evaluate.py --faithfulness` measured carries its numbers. A pruned
run's maps sit at its heads' original numbers (`kept_heads`, from its compress.json), and the
viewer shows the run's heads.json, and its tokens.json, data map and slices, when it has them
(`export_blocks` reads those files, `dataset_panel.dataset_block` the last three).

Example:
>>> # run = saved_run.load_run("runs/default")
>>> # viewer = export_texts_attention(run, [(1, "a wonderful film")], "my.txt",
>>> #                                   export_dir(run.run_dir, "my"))
"""

import dataclasses
from pathlib import Path

import numpy as np

from data.reading.texts_file import pair_line
from engine.evaluation import dataset_panel
from engine.evaluation.export_blocks import (
    ExportError,
    faithfulness_block,
    heads_block,
    kept_heads_of,
)
from inspection.attention_export import ScoringOptions, WritingOptions, export_attention
from inspection.attention_file.format import VIEWER_FILENAME
from inspection.attention_file.reader import load_attention
from inspection.attention_tokens import ATTENTION_BATCH_SIZE
from run_folder import runs


def export_dir(run_dir, source, out_dir=None) -> Path:
    """Where the export of `source` goes: `out_dir`, or `RUN_DIR/attention/<source>`."""
    if out_dir is not None:
        return Path(out_dir)
    return Path(run_dir) / runs.ATTENTION_DIR / source


def export_name(split, data_files=(), texts_file=None) -> str:
    """The folder name of an export (`export_dir`'s `source`): the texts file's stem
    ("stdin" for standard input), else the first data file's, else the split.

    Example:
    >>> export_name("test"), export_name("test", ["my/reviews.csv"]), export_name("test", (), "-")
    ('test', 'reviews', 'stdin')
    """
    if texts_file is not None:
        return "stdin" if texts_file == "-" else Path(texts_file).stem
    return Path(data_files[0]).stem if data_files else split


def check_export_target(path, overwrite=False) -> None:
    """An existing export (or anything else) at `path` is an ExportError unless `overwrite`."""
    path = Path(path)
    if path.is_file():
        raise ExportError(f"{path} is a file; give --out a folder to write the export to")
    if path.exists() and not overwrite:
        raise ExportError(
            f"{path} already holds an export: pass --overwrite to replace it, "
            "or --out DIR to write this one elsewhere"
        )


def export_run_attention(
    run,
    texts,
    out_dir,
    true_labels=None,
    example_ids=None,
    run_info=None,
    overwrite=False,
    viewer_examples=runs.VIEWER_EXAMPLES,
    heatmap_examples=runs.HEATMAP_EXAMPLES,
    methods=None,
    faithfulness=None,
    verbose=0,
):
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
    info = {
        "run_dir": str(run.run_dir),
        "model": str(run.run_dir / runs.MODEL_FILE),
        **(run_info or {}),
    }
    vectorizer, classifier = run.parts
    kept_heads = kept_heads_of(run.run_dir)
    with runs.staged_folder(out_dir) as staging:
        export_attention(
            classifier,
            vectorizer,
            texts,
            staging,
            run.class_names,
            true_labels,
            example_ids,
            scoring=ScoringOptions(methods, run.pooling, kept_heads, ATTENTION_BATCH_SIZE),
            writing=WritingOptions(
                run_info=info,
                faithfulness=faithfulness,
                heads=heads_block(run.run_dir, kept_heads or classifier.encoder.head_counts),
                dataset=_dataset_block(run.run_dir, info.get("data")),
                heatmap_examples=heatmap_examples,
                viewer_examples=viewer_examples,
                verbose=verbose,
            ),
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
        raise ExportError(
            f"--export-attention-ids: {repeated[0]} is given twice; give each id once"
        )
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
        run.run_dir / runs.EVAL_DIR / report.data_name / runs.FAITHFULNESS_FILE
    )
    width = max(5, len(str(len(report.texts) - 1)))
    export = export_run_attention(
        run,
        np.asarray(report.texts, dtype=object)[indices],
        out_dir,
        # The attention file holds one true label per example: a label set has none.
        true_labels=None if run.is_multi_label else report.labels[indices],
        example_ids=[str(index).zfill(width) for index in indices],
        run_info={"source": "evaluate.py", "data": report.data_name},
        faithfulness=faithfulness,
        **options,
    )
    export.close()
    return export.directory / VIEWER_FILENAME


def export_texts_attention(run, numbered_texts, source, out_dir, **options) -> Path:
    """Exports the attention of unlabelled texts (a texts file); returns the viewer's path.

    `numbered_texts`: (line number, text) pairs; the example ids are the line numbers. A
    run of text pairs reads each line as FIRST<tab>SECOND.
    """
    if run.is_pair:
        numbered_texts = [(line, pair_line(source, line, text)) for line, text in numbered_texts]
    width = max(5, len(str(numbered_texts[-1][0])))
    export = export_run_attention(
        run,
        [text for _, text in numbered_texts],
        out_dir,
        example_ids=[str(line).zfill(width) for line, _ in numbered_texts],
        run_info={"source": "evaluate.py", "data": source},
        **options,
    )
    export.close()
    return export.directory / VIEWER_FILENAME


@dataclasses.dataclass(frozen=True)
class ExportRequest:
    """What evaluate.py's export flags ask of each run: the attention of the first `count`
    evaluated examples, of those at `ids`, or of the `numbered_texts` ((line number, text)
    pairs) of `texts_file`, which is then exported without an evaluation; into `out`, or
    `RUN_DIR/attention/<name>/`. `options`: those of `export_run_attention` (overwrite,
    viewer_examples, heatmap_examples, methods, verbose).

    Example:
    >>> ExportRequest("test").wanted, ExportRequest("test", count=8).wanted
    (False, True)
    """

    name: str
    count: int | None = None
    ids: list | None = None
    texts_file: str | None = None
    numbered_texts: list | None = None
    out: str | None = None
    options: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if self.ids is not None:
            check_example_ids(self.ids)

    @property
    def wanted(self) -> bool:
        return any(value is not None for value in (self.count, self.ids, self.numbered_texts))

    def target(self, run_dir) -> Path | None:
        """The export's folder for `run_dir`, checked before any work, so that nothing is
        replaced unasked (`check_export_target`); None when nothing is exported."""
        if not self.wanted:
            return None
        out_dir = export_dir(run_dir, self.name, self.out)
        check_export_target(out_dir, self.options.get("overwrite", False))
        return out_dir

    def write(self, run, out_dir, report=None) -> Path:
        """Exports `run`'s attention to `out_dir` (`target`): of the texts file, else of the
        examples of its evaluation `report`; returns the viewer's path."""
        if self.numbered_texts is not None:
            return export_texts_attention(
                run, self.numbered_texts, self.texts_file, out_dir, **self.options
            )
        return export_evaluation_attention(
            run, report, out_dir, self.count, self.ids, **self.options
        )


def _dataset_block(run_dir, data_name):
    """The viewer's Dataset panel (`dataset_panel.dataset_block`), its errors an
    ExportError."""
    try:
        return dataset_panel.dataset_block(run_dir, data_name)
    except ValueError as error:
        raise ExportError(str(error)) from None
