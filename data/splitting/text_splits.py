"""Raw text and integer labels of the three splits."""

import dataclasses

import numpy as np

from runtime.errors import DataError


@dataclasses.dataclass
class TextSplits:
    """Texts (object arrays of `str`) and labels of train, validation and test: int64 ids
    (N,), or multi-hot float32 rows (N, C) for multi-label data.

    Example:
    >>> splits = TextSplits(
    ...     train=(np.array(["good", "bad"], dtype=object), np.array([1, 0])),
    ...     validation=(np.array(["fine"], dtype=object), np.array([1])),
    ...     test=(np.array(["awful"], dtype=object), np.array([0])),
    ...     class_names=["negative", "positive"],
    ... )
    >>> splits.sizes()
    {'train': 2, 'validation': 1, 'test': 1}
    """

    train: tuple[np.ndarray, np.ndarray]
    validation: tuple[np.ndarray, np.ndarray]
    test: tuple[np.ndarray, np.ndarray]
    class_names: list[str]

    def __post_init__(self):
        for split in ("train", "validation", "test"):
            texts, labels = getattr(self, split)
            labels = np.asarray(labels)
            labels = labels.astype(np.float32 if labels.ndim == 2 else np.int64)
            setattr(self, split, (np.asarray(texts, dtype=object), labels))

    @property
    def multi_label(self) -> bool:
        """Each example has a set of labels (multi-hot rows)."""
        return self.train[1].ndim == 2

    def sizes(self) -> dict[str, int]:
        """Number of documents in each split."""
        return {split: len(getattr(self, split)[1]) for split in ("train", "validation", "test")}

    def check(self, source: str, carved: tuple[str, ...] = ()) -> "TextSplits":
        """Raises a one-line DataError naming `source` unless the splits can train a
        classifier: two classes or more in train, and no split empty. `carved` names the
        splits that were carved out of train (their fix is different). Returns self.

        Example:
        >>> one_class = TextSplits(train=(["a", "b"], [0, 0]), validation=(["c"], [0]),
        ...                        test=(["d"], [0]), class_names=["pos"])
        >>> one_class.check("reviews.csv")
        Traceback (most recent call last):
        ...
        runtime.errors.DataError: reviews.csv: every training example has the label 'pos'; \
a classifier needs examples of at least two labels
        """
        if self.multi_label:
            self._check_label_sets(source)
        elif len(self.class_names) < 2 or len(np.unique(self.train[1])) < 2:
            present = ", ".join(repr(self.class_names[label]) for label in np.unique(self.train[1]))
            raise DataError(
                f"{source}: every training example has the label {present or 'none'}; a "
                "classifier needs examples of at least two labels"
            )
        for split, size in self.sizes().items():
            if size:
                continue
            if split == "train":
                fix = "the training data has no rows left; add rows"
            elif split in carved:
                total = sum(self.sizes().values())
                fix = (
                    f"carving it out of {total} training rows left it empty (identical "
                    "texts stay together); add rows, a few per label at least, or give "
                    f"its own file (dataset.{split}_file)"
                )
            else:
                fix = "it has no rows; add rows to it"
            raise DataError(f"{source}: the {split} split is empty: {fix}")
        return self

    def _check_label_sets(self, source: str) -> None:
        """Multi-label data: two labels or more, each on some training example."""
        if len(self.class_names) < 2:
            raise DataError(
                f"{source}: the data has {len(self.class_names)} label; multi-label data "
                "needs two labels or more"
            )
        unseen = [name for name, count in zip(self.class_names, self.train[1].sum(0)) if not count]
        if unseen:
            raise DataError(
                f"{source}: no training example has the label {unseen[0]!r}; add examples of "
                "it, or remove it from dataset.labels"
            )
