"""Reads the user's own labelled files (CSV, TSV, JSON Lines or Parquet) into memory,
through the streamed path's reader (`record_batches`): the same parsing, the same errors."""

import functools
import os
import pathlib

import numpy as np
import pyarrow as pa

from config import DatasetConfig
from data.reading.label_sets import class_names_of, label_sets, multi_hot
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
    label_column: str | list[str] = "label",
    columns: tuple[str, ...] | list[str] = (),
    empty_labels: bool = False,
) -> tuple[np.ndarray, ...]:
    """Reads one labelled file into (texts, label strings), both object arrays of `str`,
    followed by one such array per name in `columns` (other columns read alongside). Two
    text columns give text pairs, each joined into one string (`tokenization.pairs`); a
    list of label columns gives labels of shape (N, columns); `empty_labels`: an empty
    label field is read as "" (a multi-label row without labels), not refused.

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
    label_columns = [label_column] if isinstance(label_column, str) else list(label_column)
    for role, names in (
        ("text_column", text_columns),
        ("label_column" if isinstance(label_column, str) else "label_columns", label_columns),
        ("slice_columns", columns),
    ):
        for column in names:
            check_columns(path, {role: column})
    names = list(dict.fromkeys([*text_columns, *label_columns, *columns]))  # each read once
    may_be_empty = label_columns if empty_labels else ()
    batches = [arrays for _, arrays in read_batches(path, names, may_be_empty)]
    read = {
        name: pa.chunked_array(list(column), pa.string()).to_numpy()
        for name, column in zip(
            names, zip(*batches) if batches else ([],) * len(names), strict=True
        )
    }
    texts = read[text_columns[0]] if len(text_columns) == 1 else _pairs(path, read, text_columns)
    labels = (
        read[label_column]
        if isinstance(label_column, str)
        else np.stack([read[name] for name in label_columns], axis=1)
    )
    return (texts, labels, *(read[name] for name in columns))


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
        shards = [
            load_file_split(shard, columns=columns, **_columns_of(dataset)) for shard in paths
        ]
        texts, _, *values = (np.concatenate(arrays) for arrays in zip(*shards, strict=True))
    return texts, dict(zip(columns, values, strict=True))


def _file_splits(dataset: DatasetConfig, columns: tuple[str, ...] = ()):
    """({split: (texts, labels, *train's `columns`)}, class names, the carved splits):
    `load_file_splits`' work; `columns` are read from the training files only. Labels are
    int64 ids, or multi-hot rows (N, C) of multi-label data (`label_sets`)."""
    read = functools.partial(load_file_split, **_columns_of(dataset))
    train_paths = shard_paths(dataset.train_file, "train_file")
    train_shards = [(path, read(path, columns=columns)) for path in train_paths]
    if dataset.is_multi_label:
        class_names = class_names_of(
            [
                labels
                for path, (_, values, *_) in train_shards
                for labels in label_sets(path, values, dataset)
            ],
            dataset,
        )
    else:
        class_names = dataset.labels or sorted_class_names(
            label for _, (_, labels, *_) in train_shards for label in labels
        )

    def to_ids(path, labels):
        if dataset.is_multi_label:
            sets = label_sets(path, labels, dataset)
            return multi_hot(path, sets, class_names, given=dataset.labels is not None)
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
                [(path, read(path)) for path in shard_paths(spec, f"{split}_file")]
            )
    carved = tuple(split for split in ("validation", "test") if split not in splits)
    method = read_plan(dataset, total_bytes(train_paths)).split_method
    splits = carve_splits(
        method, splits, dataset.validation_fraction, dataset.test_fraction, dataset.split_seed
    )
    return splits, class_names, carved


def _columns_of(dataset: DatasetConfig) -> dict:
    """`load_file_split`'s arguments that say which columns hold a dataset's texts and labels."""
    return {
        "text_column": dataset.text_column,
        "label_column": list(dataset.label_columns) or dataset.label_column,
        "empty_labels": dataset.is_multi_label,
    }


def load_labelled_file(path, class_names, dataset: DatasetConfig):
    """(texts, labels) of a file read as the run's `dataset` reads its own, whose labels
    are some of `class_names` (a model's): int64 ids, or multi-hot rows of multi-label data.

    Raises:
        DataError: the file cannot be read, or has labels the model does not know.
    """
    texts, labels = load_file_split(path, **_columns_of(dataset))
    sets = label_sets(path, labels, dataset) if dataset.is_multi_label else [[x] for x in labels]
    unknown = sorted({label for labels in sets for label in labels} - set(class_names))
    if unknown:
        column = ", ".join(dataset.label_columns) or dataset.label_column
        raise DataError(
            f"{path}: column '{column}' has labels {unknown[:5]} that the model does not "
            f"know (its classes: {', '.join(class_names[:10])}"
            f"{', ...' if len(class_names) > 10 else ''})"
        )
    if dataset.is_multi_label:
        return texts, multi_hot(path, sets, class_names)
    ids = {name: index for index, name in enumerate(class_names)}
    return texts, np.array([ids[label] for label in labels], dtype=np.int64)
