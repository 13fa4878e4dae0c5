"""Raw text and integer labels of the three splits."""

import dataclasses

import numpy as np


@dataclasses.dataclass
class TextSplits:
    """Texts (object arrays of `str`) and labels (int64 arrays) of train, validation and test.

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
            setattr(
                self, split, (np.asarray(texts, dtype=object), np.asarray(labels, dtype=np.int64))
            )

    def sizes(self) -> dict[str, int]:
        """Number of documents in each split."""
        return {split: len(getattr(self, split)[1]) for split in ("train", "validation", "test")}
