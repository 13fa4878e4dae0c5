"""Streams `AttentionRecord`s into an attention export directory (format version 4)."""

import datetime
import importlib.metadata
import json
import math
import pathlib
import zipfile

import numpy as np

from inspection.attention_file import format as attention_format
from inspection.methods.rollout import RESIDUAL_WEIGHT, check_pooling, token_importance
from inspection.word_pieces import check_word_index, word_sums

ROLLOUT_DESCRIPTION = (
    "Abnar & Zuidema (2020) attention rollout over real tokens: heads averaged, "
    f"{RESIDUAL_WEIGHT} * A + {1 - RESIDUAL_WEIGHT} * I, rows renormalised, layers multiplied; "
    "importance = the class token's row of the final rollout matrix with pooling 'cls', "
    "else the mean over real query rows; sums to 1."
)


class AttentionFileWriter:
    """Writes an export directory one record at a time, holding only the manifest in memory.

    `finish()` writes meta.json, which marks the export as complete; leaving the
    `with` block without `finish()` (for example on an error) closes the files
    but leaves no meta.json, so `load_attention` refuses the half-written export.

    Example:
    >>> with AttentionFileWriter("/tmp/export", ["neg", "pos"]) as writer:  # doctest: +SKIP
    ...     writer.add(record)
    ...     writer.finish(max_probability_difference=3e-7)
    """

    def __init__(self, directory, class_names, run_info=None, pooling="mean", kept_heads=None):
        """`kept_heads`: a pruned model's heads per layer, by their original numbers (the
        maps of the others are all 0); None: every head of the maps is real."""
        self.directory = pathlib.Path(directory)
        self.class_names = [str(name) for name in class_names]
        self.run_info = dict(run_info or {})
        check_pooling(pooling)
        self.pooling = pooling
        if not self.class_names:
            raise ValueError("class_names must name at least one class. Received: class_names=[]")
        self.directory.mkdir(parents=True, exist_ok=True)
        # A stale meta.json would make a half-written new export look complete.
        (self.directory / attention_format.META_FILENAME).unlink(missing_ok=True)
        self.num_layers = None
        self.num_heads = None
        self.kept_heads = (
            None if kept_heads is None else [[int(head) for head in heads] for heads in kept_heads]
        )
        self.num_examples = 0
        # Every example has the same methods' scores: those of the first one.
        self.attribution_methods = None
        self._example_ids = set()
        self._manifest = open(
            self.directory / attention_format.MANIFEST_FILENAME, "w", encoding="utf-8"
        )
        self._arrays = zipfile.ZipFile(
            self.directory / attention_format.ARRAYS_FILENAME, "w", allowZip64=True
        )

    def add(self, record):
        """Validates one `AttentionRecord`, fills in its rollout if missing, and writes it."""
        attention_format.check_example_id(record.example_id)
        if record.example_id in self._example_ids:
            raise ValueError(f"example_id={record.example_id!r} appears twice; ids must be unique.")
        scores = np.asarray(record.attention_scores, dtype=np.float32)
        num_tokens = len(record.tokens)
        if scores.ndim != 4 or scores.shape[2:] != (num_tokens, num_tokens):
            raise ValueError(
                f"attention_scores of example {record.example_id!r} must have shape "
                f"(num_layers, num_heads, {num_tokens}, {num_tokens}) for its {num_tokens} "
                f"tokens. Received: shape={scores.shape}"
            )
        if self.num_layers is None:
            self.num_layers, self.num_heads = int(scores.shape[0]), int(scores.shape[1])
            self._check_kept_heads()
        elif scores.shape[:2] != (self.num_layers, self.num_heads):
            raise ValueError(
                f"Every example needs ({self.num_layers}, {self.num_heads}) layers and heads; "
                f"example {record.example_id!r} has {scores.shape[:2]}."
            )
        for layer, heads in enumerate(self.kept_heads):
            # Averages skip a removed head by its maps of 0 (`rollout.head_average`).
            removed = np.setdiff1d(np.arange(self.num_heads), heads)
            if scores[layer, removed].any():
                raise ValueError(
                    f"attention_scores of example {record.example_id!r}: layer {layer} keeps "
                    f"heads {heads}, so the maps of heads {removed.tolist()} must be all 0."
                )
        probabilities = np.asarray(record.probabilities, dtype=np.float32)
        if probabilities.shape != (len(self.class_names),):
            raise ValueError(
                f"probabilities of example {record.example_id!r} must have shape "
                f"({len(self.class_names)},), one per class name. "
                f"Received: shape={probabilities.shape}"
            )
        importance = record.rollout_importance
        if importance is None:
            importance = token_importance(scores, self.pooling)
        word_index = record.token_word_index
        check_word_index(word_index, num_tokens, record.example_id, record.words)
        tokens = [str(token) for token in record.tokens]
        attributions = self._checked_attributions(record, num_tokens)

        with self._arrays.open(
            attention_format.ARRAY_KEY_PREFIX + record.example_id + ".npy", "w", force_zip64=True
        ) as array_file:
            np.lib.format.write_array(array_file, scores, allow_pickle=False)
        true_index = record.true_label_index
        row = {
            "example_id": record.example_id,
            "text": record.text,
            "tokens": tokens,
            "num_tokens": num_tokens,
            "true_label": None if true_index is None else self.class_names[true_index],
            "true_label_index": None if true_index is None else int(true_index),
            "predicted_label": self.class_names[record.predicted_label_index],
            "predicted_label_index": int(record.predicted_label_index),
            "correct": None
            if true_index is None
            else bool(true_index == record.predicted_label_index),
            "probabilities": [float(value) for value in probabilities],
            "probability_difference": record.probability_difference,
            "rollout_importance": [float(value) for value in importance],
            "word_index": [None if index is None else int(index) for index in word_index],
            "special": [index is None for index in word_index],
            "words": list(record.words),
            "word_importance": word_sums(importance, word_index).tolist(),
            "attributions": {method: scores.tolist() for method, scores in attributions.items()},
            "word_attributions": {
                method: word_sums(scores, word_index).tolist()
                for method, scores in attributions.items()
            },
        }
        self._manifest.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._example_ids.add(record.example_id)
        self.num_examples += 1

    def _check_kept_heads(self):
        """Fills in every head when no `kept_heads` was given; else checks it fits the maps."""
        every_head = list(range(self.num_heads))
        if self.kept_heads is None:
            self.kept_heads = [every_head] * self.num_layers
        if len(self.kept_heads) != self.num_layers or any(
            not heads or heads != sorted(set(heads)) or not set(heads) <= set(every_head)
            for heads in self.kept_heads
        ):
            raise ValueError(
                f"kept_heads must list, for each of the {self.num_layers} layers, the heads it "
                f"keeps: increasing numbers from 0 to {self.num_heads - 1}, one at least. "
                f"Received: kept_heads={self.kept_heads}"
            )

    def _checked_attributions(self, record, num_tokens):
        """The record's {method: float64 (T,)}, the first record's methods, finite values."""
        attributions = {
            method: np.asarray(scores, dtype=np.float64)
            for method, scores in (record.attributions or {}).items()
        }
        if self.attribution_methods is None:
            self.attribution_methods = list(attributions)
        if list(attributions) != self.attribution_methods:
            raise ValueError(
                f"Every example needs the scores of the same methods, {self.attribution_methods}"
                f"; example {record.example_id!r} has {list(attributions)}."
            )
        for method, scores in attributions.items():
            if scores.shape != (num_tokens,) or not np.all(np.isfinite(scores)):
                raise ValueError(
                    f"attributions[{method!r}] of example {record.example_id!r} must be "
                    f"{num_tokens} finite scores, one per token. Received: shape={scores.shape}"
                    f", finite={bool(np.all(np.isfinite(scores)))}"
                )
        return attributions

    def finish(
        self,
        max_probability_difference=None,
        probability_tolerance=None,
        viewer_examples=None,
        heatmap_examples=None,
        attribution_seconds=None,
        faithfulness=None,
    ):
        """Closes the arrays and manifest and writes meta.json, completing the export.

        `viewer_examples` and `heatmap_examples`: the settings the export used (at most so
        many examples in index.html, and with heatmaps and BertViz files).
        `attribution_seconds`: {method: seconds per example} the attributions took.
        `faithfulness`: the methods' faithfulness on the exported data (the `faithfulness`
        block of docs/attention_format.md), None when not measured.
        """
        self.close()
        difference = max_probability_difference
        if difference is not None and not math.isfinite(difference):
            raise ValueError(
                "max_probability_difference must be finite. "
                f"Received: max_probability_difference={difference}"
            )
        meta = {
            "format_version": attention_format.FORMAT_VERSION,
            "class_names": self.class_names,
            "num_examples": self.num_examples,
            "num_layers": self.num_layers,
            "num_heads": self.num_heads,
            "kept_heads": self.kept_heads,
            "max_probability_difference": None if difference is None else float(difference),
            "probability_tolerance": probability_tolerance,
            "pooling": self.pooling,
            "viewer_examples": viewer_examples,
            "heatmap_examples": heatmap_examples,
            "rollout": ROLLOUT_DESCRIPTION,
            "attribution_methods": self.attribution_methods or [],
            "attribution_seconds_per_example": attribution_seconds,
            "faithfulness": faithfulness,
            "run_info": self.run_info,
            "created_at": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"
            ),
            "keras_attention_lab_version": _project_version(),
        }
        meta_path = self.directory / attention_format.META_FILENAME
        meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return meta

    def close(self):
        if not self._manifest.closed:
            self._manifest.close()
        if self._arrays.fp is not None:
            self._arrays.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def _project_version():
    try:
        return importlib.metadata.version("keras-attention-lab")
    except importlib.metadata.PackageNotFoundError:  # Run from a checkout never installed.
        return "unknown"
