"""Multi-label data: each text's set of labels, read from one column of label sets
(`dataset.label_separator`) or from one 0/1 column per label (`dataset.label_columns`),
as multi-hot rows (float32, one column per class) for the sigmoid classifier.

Errors name the row and the fix: a 0/1 column holding another value, a label the training
data never had (in `--data` files too).
"""

import numpy as np

from config import DatasetConfig
from data.reading.shards import row_name, sorted_class_names
from runtime.errors import DataError

# What a 0/1 label column may hold (as read: numbers and booleans become these strings).
TRUE_VALUES = {"1", "1.0", "true"}
FALSE_VALUES = {"0", "0.0", "false"}


def label_sets(path, labels: np.ndarray, dataset: DatasetConfig) -> list[list[str]]:
    """Each row's labels, in the file's order: the label column's values (N,) split on
    `label_separator` (spaces around each label stripped, empty pieces dropped: an empty
    field is no label), or the names of the `label_columns` (N, K) that hold 1.

    Example:
    >>> dataset = DatasetConfig(train_file="x.csv", label_separator="|")
    >>> label_sets("x.csv", np.array(["sports | politics", "", "tech|"], dtype=object), dataset)
    [['sports', 'politics'], [], ['tech']]
    """
    columns = [labels] if labels.ndim == 1 else list(labels.T)
    if dataset.label_separator is not None:
        return [
            list(
                dict.fromkeys(
                    label.strip() for label in value.split(dataset.label_separator) if label.strip()
                )
            )
            for value in columns[0]
        ]
    flags = [_binary(path, name, values) for name, values in zip(dataset.label_columns, columns)]
    names = np.array(dataset.label_columns, dtype=object)
    return [list(names[row]) for row in np.stack(flags, axis=1)] if flags else []


def _binary(path, column, values) -> np.ndarray:
    """A 0/1 column as booleans; another value is a DataError naming its row."""
    lowered = np.char.lower(np.asarray(values, dtype=str))
    valid = np.isin(lowered, sorted(TRUE_VALUES | FALSE_VALUES))
    if not valid.all():
        row = int(np.flatnonzero(~valid)[0])
        raise DataError(
            f"{row_name(path, row)} column '{column}' holds {values[row]!r}; a column of "
            "dataset.label_columns holds 0 or 1 (fix the value, or leave the column out)"
        )
    return np.isin(lowered, sorted(TRUE_VALUES))


def class_names_of(sets, dataset: DatasetConfig) -> list[str]:
    """The classes: `dataset.labels`, else the label columns in order, else every label of
    the training sets, sorted (as numbers when all are integers)."""
    if dataset.labels:
        return list(dataset.labels)
    if dataset.label_columns:
        return list(dataset.label_columns)
    return sorted_class_names(label for labels in sets for label in labels)


def multi_hot(path, sets, class_names, given=False) -> np.ndarray:
    """(N, C) float32: 1 where a row has the class. A label that is not a class is a
    DataError naming its row (`given`: the classes are `dataset.labels`).

    Example:
    >>> multi_hot("x.csv", [["b"], [], ["a", "b"]], ["a", "b"]).tolist()
    [[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    """
    index = {name: column for column, name in enumerate(class_names)}
    rows = np.zeros((len(sets), len(class_names)), dtype=np.float32)
    for row, labels in enumerate(sets):
        for label in labels:
            if label not in index:
                shown = ", ".join(class_names[:10]) + (", ..." if len(class_names) > 10 else "")
                fix = (
                    f"dataset.labels ({shown}); fix the label or add it to dataset.labels"
                    if given
                    else f"the training labels ({shown}); fix it or add training examples of it"
                )
                raise DataError(f"{row_name(path, row)}: label '{label}' is not in {fix}")
            rows[row, index[label]] = 1.0
    return rows
