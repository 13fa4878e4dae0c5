"""The one streaming pass before training: a source's labels and rows, per split part.

It reads the label column (and, when splits are carved by hash, the text column, whose
hash picks each row's part), holding only counts: memory does not grow with the rows.
"""

from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc
import tensorflow as tf

from data.reading.shards import label_ids
from data.splitting.hashed import split_parts
from runtime.errors import DataError


def count_labels(
    source, edges: list[int], seed: int, class_names: list[str] | None = None
) -> list[Counter]:
    """[label counts of train, of each carved part] of `source` in one pass; with
    `class_names`, a label outside them is a DataError naming its row.

    Example:
    >>> # count_labels(FileSource([Path("train.csv")], "text", "label"), [], seed=0)
    >>> # [Counter({'pos': 120, 'neg': 120})]
    """
    counts = [Counter() for _ in range(len(edges) + 1)]
    for name_row, row, labels, texts in source.label_batches(with_texts=bool(edges)):
        if class_names is not None:
            label_ids(
                labels,
                class_names,
                lambda index, row=row, name=name_row: name(row + index),
                source.label_column,
            )
        if not edges:
            counts[0].update(_value_counts(labels))
            continue
        parts = split_parts(tf.constant(texts, tf.string), edges, seed).numpy()
        for part, counter in enumerate(counts):
            counter.update(_value_counts(labels.filter(pa.array(parts == part))))
    return counts


def _value_counts(labels) -> dict[str, int]:
    counted = pc.value_counts(labels)
    return dict(
        zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True)
    )


def check_counts(
    source_name: str, counts: dict[str, Counter], class_names: list[str], carved: tuple[str, ...]
) -> None:
    """A one-line DataError unless train has two labels or more and no split is empty
    (the in-memory path's `TextSplits.check`, on counts)."""
    present = [label for label in class_names if counts["train"][label]]
    if len(present) < 2:
        shown = ", ".join(repr(label) for label in present) or "none"
        raise DataError(
            f"{source_name}: every training example has the label {shown}; a "
            "classifier needs examples of at least two labels"
        )
    for split, counter in counts.items():
        if sum(counter.values()):
            continue
        if split in carved:
            total = sum(sum(counter.values()) for counter in counts.values())
            fix = (
                f"carving it out of {total} training rows left it empty (identical "
                "texts stay together); add rows or give its own file "
                f"(dataset.{split}_file)"
            )
        else:
            fix = "it has no rows; add rows to it"
        raise DataError(f"{source_name}: the {split} split is empty: {fix}")
