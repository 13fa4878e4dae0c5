"""Reads an attention export directory (format version 4; older versions are refused with
the command that rewrites them, upgrade_run.py, through `upgrade`); `save_attention` writes
one (through `writer`; the format's names are `format`'s).

Layout of the directory (docs/attention_format.md):

    meta.json        format_version, class names, layers, heads (those a pruned model kept),
                     pooling, probability check, run, attribution methods, faithfulness
    manifest.jsonl   one JSON object per example (pandas: `pd.read_json(path, lines=True)`)
    attention.npz    `attention_<example_id>`: float32 (layers, heads, T, T), real tokens only
"""

import dataclasses
import json
import pathlib

import numpy as np
import pandas as pd

from config import earlier_version_message
from inspection.attention_file.format import (
    ARRAY_KEY_PREFIX,
    ARRAYS_FILENAME,
    FORMAT_VERSION,
    MANIFEST_COLUMNS,
    MANIFEST_FILENAME,
    META_FILENAME,
)
from inspection.attention_file.record import AttentionRecord
from inspection.attention_file.writer import AttentionFileWriter

OLDER_VERSIONS = (1, 2, 3)  # upgrade_run.py rewrites them as the current one (`upgrade`)


class OutdatedExportError(ValueError):
    """An export of an older format version; the message names the command that rewrites
    it (upgrade_run.py on its run folder)."""


@dataclasses.dataclass
class AttentionFile:
    """An attention export loaded by `load_attention`.

    The manifest and metadata are read at once; attention arrays are read from
    `attention.npz` one example at a time, so large exports stay cheap to open.
    Use as a context manager (or call `close()`) to release the npz file.

    Attributes:
        directory: the export directory.
        format_version: int, `FORMAT_VERSION`: older exports are refused (upgrade_run.py
            rewrites them).
        class_names: list of C class names; label indices index into it.
        num_layers: int.
        num_heads: int: of a pruned model, the heads it had before (the maps' axis 1).
        kept_heads: per layer, the numbers of the heads the model has (lists of int);
            every head before version 4. A removed head's maps are all 0.
        max_probability_difference: largest |fast path - scores path| over all
            examples and classes, or None when no fast path was given.
        pooling: "mean", "max" or "cls"; with "cls" token 0 is the class token.
        run_info: dict describing the model and run (free form, from the exporter).
        attribution_methods: the methods every example has scores of, in
            `inspection.methods.attribution.METHODS` order (["rollout"] before version 3).
        faithfulness: the faithfulness of the methods on the exported split
            (docs/attention_format.md), or None when it was not measured.
        meta: the whole of meta.json.
        manifest: pandas.DataFrame, one row per example, columns
            `MANIFEST_COLUMNS`, in export order.

    Example:
    >>> with load_attention("runs/imdb/attention") as export:  # doctest: +SKIP
    ...     scores = export.attention_scores(export.example_ids[0])  # (L, N, T, T)
    ...     words = export.word_attributions(export.example_ids[0])  # {method: (W,)}
    """

    directory: pathlib.Path
    format_version: int
    class_names: list
    num_layers: int
    num_heads: int
    kept_heads: list
    max_probability_difference: float | None
    pooling: str
    run_info: dict
    attribution_methods: list
    faithfulness: dict | None
    meta: dict
    manifest: pd.DataFrame
    _arrays: object = dataclasses.field(default=None, repr=False)

    @property
    def example_ids(self):
        return list(self.manifest["example_id"])

    def __len__(self):
        return len(self.manifest)

    @property
    def best_method(self):
        """The most faithful method on the exported split, or None when not measured."""
        return None if self.faithfulness is None else self.faithfulness["best_method"]

    def attributions(self, example_id):
        """Every method's scores over the example's T tokens: {method: float64 (T,)}."""
        return {
            method: np.asarray(scores, dtype=np.float64)
            for method, scores in self._row(example_id)["attributions"].items()
        }

    def word_attributions(self, example_id):
        """Every method's scores summed per word (no special token): {method: float64 (W,)}."""
        return {
            method: np.asarray(scores, dtype=np.float64)
            for method, scores in self._row(example_id)["word_attributions"].items()
        }

    def attention_scores(self, example_id):
        """Returns the float32 array (layers, heads, T, T) of one example."""
        if self._arrays is None:
            self._arrays = np.load(self.directory / ARRAYS_FILENAME)
        key = ARRAY_KEY_PREFIX + str(example_id)
        if key not in self._arrays.files:
            raise KeyError(f"No attention for example_id={example_id!r} in {self.directory}.")
        return self._arrays[key]

    def record(self, example_id):
        """Returns one example as an `AttentionRecord`."""
        return _record_from_row(self._row(example_id), self.attention_scores(example_id))

    def records(self):
        """Yields every example as an `AttentionRecord`, in export order."""
        for _, row in self.manifest.iterrows():
            yield _record_from_row(row, self.attention_scores(row["example_id"]))

    def _row(self, example_id):
        rows = self.manifest.index[self.manifest["example_id"] == str(example_id)]
        if len(rows) == 0:
            raise KeyError(f"No example_id={example_id!r} in the manifest of {self.directory}.")
        return self.manifest.loc[rows[0]]

    def close(self):
        if self._arrays is not None:
            self._arrays.close()
            self._arrays = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def read_manifest(directory):
    """The manifest.jsonl of an export directory as a pandas.DataFrame, ids as strings."""
    # dtype=False keeps ids such as "00012" as strings instead of guessing numbers;
    # precise_float reads back the very floats written (the default parser is off by ulps).
    manifest = pd.read_json(
        pathlib.Path(directory) / MANIFEST_FILENAME,
        lines=True,
        dtype=False,
        convert_dates=False,
        precise_float=True,
    )
    if len(manifest) == 0:
        manifest = pd.DataFrame(columns=list(MANIFEST_COLUMNS))
    manifest["example_id"] = manifest["example_id"].astype(str)
    return manifest


def _record_from_row(row, attention_scores):
    true_index = row["true_label_index"]
    difference = row["probability_difference"]
    return AttentionRecord(
        example_id=row["example_id"],
        text=row["text"],
        tokens=list(row["tokens"]),
        attention_scores=attention_scores,
        probabilities=np.asarray(row["probabilities"], dtype=np.float32),
        predicted_label_index=int(row["predicted_label_index"]),
        true_label_index=None if _is_missing(true_index) else int(true_index),
        rollout_importance=np.asarray(row["rollout_importance"], dtype=np.float64),
        probability_difference=None if _is_missing(difference) else float(difference),
        word_index=list(row["word_index"]),
        word_texts=list(row["words"]),
        attributions={
            method: np.asarray(scores, dtype=np.float64)
            for method, scores in row["attributions"].items()
        },
    )


def _is_missing(value):
    return value is None or (isinstance(value, float) and np.isnan(value))


def save_attention(
    directory,
    records,
    class_names,
    run_info=None,
    pooling="mean",
    max_probability_difference=None,
    probability_tolerance=None,
    kept_heads=None,
):
    """Writes `records` (an iterable of `AttentionRecord`) as an export directory.

    Records are streamed to disk one at a time; meta.json is written last, so
    a directory without it is an export that did not finish.

    Args:
        directory: output directory, created if missing.
        records: iterable of `AttentionRecord`.
        class_names: list of C class names.
        run_info: optional JSON-serialisable dict about the model and run.
        pooling: the classifier's pooling, "mean", "max" or "cls"; chooses how
            missing rollout importances are computed (see `rollout.token_importance`).
        max_probability_difference: optional float, from the fast path check.
        probability_tolerance: optional float, the tolerance of that check.
        kept_heads: of a pruned model, per layer the original numbers of its heads (the
            records' maps of the others all 0); None: every head is real.

    Returns:
        The directory as a `pathlib.Path`.

    Example:
    >>> save_attention("/tmp/export", [record], ["neg", "pos"])  # doctest: +SKIP
    """
    with AttentionFileWriter(
        directory, class_names, run_info=run_info, pooling=pooling, kept_heads=kept_heads
    ) as writer:
        for record in records:
            writer.add(record)
        writer.finish(
            max_probability_difference=max_probability_difference,
            probability_tolerance=probability_tolerance,
        )
    return pathlib.Path(directory)


def load_attention(path):
    """Opens an export directory written by `save_attention` or `export_attention`.

    Args:
        path: the export directory, or any file inside it (e.g. its meta.json).

    Returns:
        An `AttentionFile`.

    Example:
    >>> export = load_attention("runs/imdb/attention")  # doctest: +SKIP
    >>> export.manifest[["example_id", "predicted_label"]].head()  # doctest: +SKIP
    """
    directory = pathlib.Path(path)
    if directory.is_file():
        directory = directory.parent
    meta_path = directory / META_FILENAME
    if not meta_path.exists():
        raise FileNotFoundError(
            f"No {META_FILENAME} in {directory}: pass an attention export directory "
            "(an export that stopped early has no meta.json; run it again)."
        )
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    version = meta.get("format_version")
    if version in OLDER_VERSIONS:
        # An export sits in <run>/attention/<name>/; one elsewhere came from some run.
        run_dir = directory.parent.parent if directory.parent.name == "attention" else "RUN_DIR"
        raise OutdatedExportError(
            earlier_version_message(meta_path, run_dir, f"format_version={version}")
        )
    if version != FORMAT_VERSION:
        raise ValueError(
            f"{meta_path} has format_version={version!r}; this reader reads version "
            f"{FORMAT_VERSION}. Re-export with this version of keras_attention_lab."
        )
    manifest = read_manifest(directory)
    pooling = meta.get("pooling", "mean")
    methods = meta["attribution_methods"]
    return AttentionFile(
        directory=directory,
        format_version=version,
        class_names=list(meta["class_names"]),
        num_layers=meta["num_layers"],
        num_heads=meta["num_heads"],
        kept_heads=meta.get("kept_heads")
        or ([list(range(meta["num_heads"]))] * meta["num_layers"] if meta["num_layers"] else []),
        max_probability_difference=meta.get("max_probability_difference"),
        pooling=pooling,
        run_info=meta.get("run_info", {}),
        attribution_methods=list(methods),
        faithfulness=meta.get("faithfulness"),
        meta=meta,
        manifest=manifest,
    )
