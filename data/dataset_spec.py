"""Which labelled text to train on: a built-in dataset, a TFDS catalog dataset or files."""

import dataclasses
from collections.abc import Mapping
from typing import Any

from data.errors import DataError, spec_from_mapping


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
    """Where the text comes from and how its splits are made.

    Set either `name` (a built-in or TFDS catalog dataset) or `train_file` (your own files).

    Example:
    >>> DatasetSpec(name="reuters_r8").test_split
    'test'
    >>> DatasetSpec.from_dict({"train_file": "train.csv", "text_column": "review"}).text_column
    'review'
    """

    # Built-in ("rotten_tomatoes", "reuters_r8", "reuters_r52", "twenty_newsgroups",
    # "bbc_news") or any TFDS catalog name ("imdb_reviews").
    name: str | None = None
    # TFDS data dir; None uses the TFDS default (TFDS_DATA_DIR or ~/tensorflow_datasets).
    data_dir: str | None = None
    # Your own files: .csv, .tsv, .jsonl or .parquet, read with pandas.
    train_file: str | None = None
    validation_file: str | None = None
    test_file: str | None = None
    # Column (files) or feature key (TFDS catalog) holding the text and the label.
    text_column: str = "text"
    label_column: str = "label"
    # TFDS split names. validation_split None carves validation_fraction out of train
    # (built-in datasets already have a "validation" split, which None then means).
    train_split: str = "train"
    validation_split: str | None = None
    # None (or, for files, no test_file) carves test_fraction out of train.
    test_split: str | None = "test"
    # Fractions of the training documents held out when a split is carved (stratified).
    validation_fraction: float = 0.1
    test_fraction: float = 0.1
    # Seeds the carving, so the same spec always gives the same splits.
    seed: int = 0

    def __post_init__(self):
        if (self.name is None) == (self.train_file is None):
            raise DataError(
                "dataset spec needs exactly one of 'name' or 'train_file'; "
                f"Received: name={self.name!r}, train_file={self.train_file!r}"
            )
        for key in ("validation_fraction", "test_fraction"):
            value = getattr(self, key)
            if not 0.0 < value < 1.0:
                raise DataError(f"dataset spec '{key}' must be in (0, 1); Received: {key}={value}")
        if self.validation_fraction + self.test_fraction >= 1.0:
            raise DataError(
                "dataset spec 'validation_fraction' + 'test_fraction' must be below 1; "
                f"Received: {self.validation_fraction} + {self.test_fraction}"
            )

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "DatasetSpec":
        """Builds a spec from a config mapping; unknown keys are errors that name the key."""
        return spec_from_mapping(cls, values, "dataset spec")
