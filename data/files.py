"""Reads the user's own labelled text files: CSV, TSV, JSON Lines or Parquet."""

import io
import os
import pathlib

import numpy as np
import pandas as pd

from config import DatasetConfig
from data.errors import DataError
from data.read_plan import read_plan
from data.sources import (
    check_suffix,
    row_name,
    shard_paths,
    sorted_class_names,
    total_bytes,
    unknown_label,
)
from data.splitting import carve_splits
from data.text_splits import TextSplits


def _raise_invalid_utf8(path: pathlib.Path, table: pd.DataFrame, line: int):
    for row, values in enumerate(table.itertuples(index=False)):
        for column, value in zip(table.columns, values, strict=True):
            if isinstance(value, str) and "\ufffd" in value:
                raise DataError(
                    f"{row_name(path, row)} column '{column}' is not valid UTF-8; "
                    "save the file as UTF-8"
                )
    raise DataError(f"{path} line {line} is not valid UTF-8; save the file as UTF-8")


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
    if not path.is_file():
        raise DataError(f"{path} does not exist; check dataset.train_file, validation_file "
                        "and test_file (paths are relative to where you run the command)")
    raw = path.read_bytes() if path.suffix != ".parquet" else b""
    try:
        raw.decode("utf-8-sig")
        invalid_utf8_at = None
    except UnicodeDecodeError as error:
        invalid_utf8_at = error.start
    try:
        if path.suffix == ".parquet":
            table = pd.read_parquet(path)
        else:
            # Undecodable bytes become U+FFFD so the table still parses and the error can
            # name the row and column that hold them.
            content = io.StringIO(raw.decode("utf-8-sig", errors="replace"))
            if path.suffix == ".jsonl":
                table = pd.read_json(content, lines=True, dtype=False)
            else:
                # Everything is text: "NA", "null" or "1" are legitimate texts and labels.
                separator = "\t" if path.suffix == ".tsv" else ","
                table = pd.read_csv(content, sep=separator, dtype=str, keep_default_na=False)
    except Exception as error:  # pandas and pyarrow raise many types for malformed input.
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise DataError(
            f"{path} could not be read as {path.suffix[1:]} ({type(error).__name__}: {message}); "
            "fix the file format"
        ) from None
    if invalid_utf8_at is not None:
        _raise_invalid_utf8(path, table, line=raw[:invalid_utf8_at].count(b"\n") + 1)

    for role, column in (("text_column", text_column), ("label_column", label_column)):
        if column not in table.columns:
            columns = ", ".join(map(str, table.columns))
            raise DataError(
                f"{path} has no column '{column}' (columns: {columns}); set dataset.{role} to "
                "one of them"
            )
    texts = table[text_column].to_numpy(dtype=object)
    labels = table[label_column].to_numpy(dtype=object)
    for column, values in ((text_column, texts), (label_column, labels)):
        for row, value in enumerate(values):
            if (
                value is None
                or (isinstance(value, float) and np.isnan(value))
                or not str(value).strip()
            ):
                raise DataError(
                    f"{row_name(path, row)} column '{column}' is empty; fill it or remove the row"
                )
    label_types = {type(label).__name__: label for label in labels if label is not None}
    if len(label_types) > 1:
        # 1 and "1" would be two classes: the file must say which it means.
        examples = ", ".join(f"{name} {value!r}" for name, value in label_types.items())
        raise DataError(
            f"{path} column '{label_column}' mixes label types ({examples}); write every "
            "label the same way, all numbers or all strings"
        )
    return (
        np.array([str(text) for text in texts], dtype=object),
        np.array([str(label) for label in labels], dtype=object),
    )


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
    label_ids = {name: index for index, name in enumerate(class_names)}

    def to_ids(path, labels):
        for row, label in enumerate(labels):
            if label not in label_ids:
                raise unknown_label(row_name(path, row), dataset.label_column, label,
                                    class_names, given=dataset.labels is not None)
        return np.array([label_ids[label] for label in labels], dtype=np.int64)

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
