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
from runtime.errors import DataError
from tokenization.pairs import PAIR_MARK, join_pairs


def load_file_split(
    path: os.PathLike | str,
    text_column: str | list[str] = "text",
    label_column: str = "label",
    columns: tuple[str, ...] | list[str] = (),
) -> tuple[np.ndarray, ...]:
    """Reads one labelled file into (texts, label strings), both object arrays of `str`,
    followed by one such array per name in `columns` (other columns read alongside). Two
    text columns give text pairs, each joined into one string (`tokenization.pairs`).

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
    text_columns = [text_column] if isinstance(text_column, str) else list(text_column)
    for role, names in (
        ("text_column", text_columns),
        ("label_column", [label_column]),
        ("slice_columns", columns),
    ):
        for column in names:
            check_columns(path, {role: column})
    names = list(dict.fromkeys([*text_columns, label_column, *columns]))  # each read once
    batches = [arrays for _, arrays in read_batches(path, names)]
    read = {
        name: pa.chunked_array(list(column), pa.string()).to_numpy()
        for name, column in zip(
            names, zip(*batches) if batches else ([],) * len(names), strict=True
        )
    }
    texts = read[text_columns[0]] if len(text_columns) == 1 else _pairs(path, read, text_columns)
    return (texts, *(read[name] for name in (label_column, *columns)))


def _pairs(path, read, text_columns):
    """The two text columns' rows joined into pairs; a side holding the pair mark is an
    error naming its row."""
    for column in text_columns:
        marked = [index for index, text in enumerate(read[column]) if PAIR_MARK in text]
        if marked:
            raise DataError(
                f"{row_name(path, marked[0])} column '{column}' holds {PAIR_MARK!r} (U+241E), "
                "the mark that joins a pair's texts; remove it from the file"
            )
    return join_pairs(*(read[column] for column in text_columns))


def load_file_splits(dataset: DatasetConfig) -> TextSplits:
    """Reads the dataset's train/validation/test files (each one file, a glob or a folder of
    shards), carving missing splits out of train.

    Class names are `dataset.labels`, else the train labels, sorted (numerically when
    they are all integers); another label in a split is an error naming its row.

    Example:
    >>> # load_file_splits(DatasetConfig(train_file="train.csv", test_file="test.csv"))
    """
    splits, class_names, carved = _file_splits(dataset)
    return TextSplits(**splits, class_names=class_names).check(dataset.train_file, carved)


def load_columns(dataset: DatasetConfig, columns, split: str = "test", path=None):
    """(texts, {column: values}): other columns of the user's rows, in the order of the texts
    `load_labelled_file` gives of the file `path`, or else `load_file_splits` of `split`:
    read from the split's own file(s), or from train's, carved as training carved them.

    Raises:
        DataError: a file lacks a column (the message names it and the file's columns), or
            the dataset is a TFDS one, whose features are not columns of files.

    Example:
    >>> import tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "new.csv"
    >>> _ = path.write_text("text,label,genre\\ngreat film,pos,drama\\n")
    >>> load_columns(DatasetConfig(train_file="train.csv"), ["genre"], path=path)
    (array(['great film'], dtype=object), {'genre': array(['drama'], dtype=object)})
    """
    names = (dataset.text_column, dataset.label_column)
    own = {"validation": dataset.validation_file, "test": dataset.test_file}.get(split)
    if path is None and own is None:  # train, or a split carved out of it
        if dataset.train_file is None:
            raise DataError(
                f"dataset.slice_columns ({', '.join(columns)}) names columns of your own files "
                f"(dataset.train_file or evaluate.py --data FILE), not of the TFDS dataset "
                f"'{dataset.tfds_builder_name}'; evaluate a labelled file with --data"
            )
        texts, _, *values = _file_splits(dataset, tuple(columns))[0][split]
    else:
        paths = [pathlib.Path(path)] if path is not None else shard_paths(own, f"{split}_file")
        shards = [load_file_split(shard, *names, columns) for shard in paths]
        texts, _, *values = (np.concatenate(arrays) for arrays in zip(*shards, strict=True))
    return texts, dict(zip(columns, values, strict=True))


def _file_splits(dataset: DatasetConfig, columns: tuple[str, ...] = ()):
    """({split: (texts, label ids, *train's `columns`)}, class names, the carved splits):
    `load_file_splits`' work; `columns` are read from the training files only."""
    names = (dataset.text_column, dataset.label_column)
    train_paths = shard_paths(dataset.train_file, "train_file")
    train_shards = [(path, load_file_split(path, *names, columns)) for path in train_paths]
    class_names = dataset.labels or sorted_class_names(
        label for _, (_, labels, *_) in train_shards for label in labels
    )

    def to_ids(path, labels):
        return label_ids(
            pa.array(labels, pa.string()),
            class_names,
            functools.partial(row_name, path),
            dataset.label_column,
            given=dataset.labels is not None,
        )

    def joined(shards):  # [(path, (texts, label strings, *columns))] -> one array each
        rows = [(texts, to_ids(path, labels), *more) for path, (texts, labels, *more) in shards]
        return tuple(np.concatenate(values) for values in zip(*rows, strict=True))

    splits = {"train": joined(train_shards)}
    for split, spec in (("validation", dataset.validation_file), ("test", dataset.test_file)):
        if spec is not None:
            splits[split] = joined(
                [
                    (path, load_file_split(path, *names))
                    for path in shard_paths(spec, f"{split}_file")
                ]
            )
    carved = tuple(split for split in ("validation", "test") if split not in splits)
    method = read_plan(dataset, total_bytes(train_paths)).split_method
    splits = carve_splits(
        method, splits, dataset.validation_fraction, dataset.test_fraction, dataset.split_seed
    )
    return splits, class_names, carved


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
