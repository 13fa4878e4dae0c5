"""Reads the user's own labelled files (CSV, TSV, JSON Lines or Parquet) into memory,
through the streamed path's reader (`record_batches`): the same parsing, the same errors."""

import functools
import os
import pathlib

import numpy as np
import pyarrow as pa

from config import DatasetConfig
from data.reading.read_plan import read_plan
from data.reading.record_batches import check_columns, read_batches
from data.reading.shards import (
    check_suffix,
    label_ids,
    row_name,
    shard_paths,
    sorted_class_names,
    total_bytes,
)
from data.splitting.stratified import carve_splits
from data.splitting.text_splits import TextSplits
from errors import DataError


def load_file_split(
    path: os.PathLike | str, text_column: str = "text", label_column: str = "label"
) -> tuple[np.ndarray, np.ndarray]:
    """Reads one labelled file into (texts, label strings), both object arrays of `str`.

    Raises:
        DataError: unknown file type, missing file or column, text that is not UTF-8, an
            unparsable file, or an empty text or label; the message names file, row and column.

    Example:
    >>> import tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "train.csv"
    >>> _ = path.write_text("text,label\\ngreat film,pos\\n")
    >>> load_file_split(path)
    (array(['great film'], dtype=object), array(['pos'], dtype=object))
    """
    path = pathlib.Path(path)
    check_suffix(path)
    check_columns(path, {"text_column": text_column, "label_column": label_column})
    batches = [arrays for _, arrays in read_batches(path, [text_column, label_column])]
    return tuple(pa.chunked_array(list(column), pa.string()).to_numpy()
                 for column in (zip(*batches) if batches else ([], [])))


def load_file_splits(dataset: DatasetConfig) -> TextSplits:
    """Reads the dataset's train/validation/test files (each one file, a glob or a folder of
    shards), carving missing splits out of train.

    Class names are `dataset.labels`, else the train labels, sorted (numerically when
    they are all integers); another label in a split is an error naming its row.

    Example:
    >>> # load_file_splits(DatasetConfig(train_file="train.csv", test_file="test.csv"))
    """
    columns = (dataset.text_column, dataset.label_column)
    train_paths = shard_paths(dataset.train_file, "train_file")
    train_shards = [(path, *load_file_split(path, *columns)) for path in train_paths]
    class_names = dataset.labels or sorted_class_names(
        label for _, _, labels in train_shards for label in labels)

    def to_ids(path, labels):
        return label_ids(pa.array(labels, pa.string()), class_names,
                         functools.partial(row_name, path), dataset.label_column,
                         given=dataset.labels is not None)

    def joined(shards):
        return (np.concatenate([texts for _, texts, _ in shards]),
                np.concatenate([to_ids(path, labels) for path, _, labels in shards]))

    splits = {"train": joined(train_shards)}
    for split, spec in (("validation", dataset.validation_file), ("test", dataset.test_file)):
        if spec is not None:
            splits[split] = joined([(path, *load_file_split(path, *columns))
                                    for path in shard_paths(spec, f"{split}_file")])
    carved = tuple(split for split in ("validation", "test") if split not in splits)
    method = read_plan(dataset, total_bytes(train_paths)).split_method
    splits = carve_splits(method, splits, dataset.validation_fraction, dataset.test_fraction,
                          dataset.split_seed)
    return TextSplits(**splits, class_names=class_names).check(dataset.train_file, carved)


def load_labelled_file(path, class_names, text_column="text", label_column="label"):
    """(texts, label ids) of a file whose labels are some of `class_names` (a model's).

    Raises:
        DataError: the file cannot be read, or has labels the model does not know.
    """
    texts, label_names = load_file_split(path, text_column, label_column)
    ids = {name: index for index, name in enumerate(class_names)}
    unknown = sorted(set(label_names) - set(ids))
    if unknown:
        raise DataError(
            f"{path}: column '{label_column}' has labels {unknown[:5]} that the model does not "
            f"know (its classes: {', '.join(class_names[:10])}"
            f"{', ...' if len(class_names) > 10 else ''})"
        )
    return texts, np.array([ids[label] for label in label_names], dtype=np.int64)
