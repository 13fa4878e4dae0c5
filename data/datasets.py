"""The one entry point from the `dataset` and `text` config sections to training pipelines."""

import dataclasses
from collections.abc import Mapping
from typing import Any

import keras
import tensorflow as tf

from config import DatasetConfig, TextConfig
from data.loading import load_text_splits
from data.pipelines import make_pipelines
from data.text_splits import TextSplits
from tokenization import make_vectorizer


@dataclasses.dataclass
class Datasets:
    """Pipelines of the three splits, their raw text, the adapted vectorizer, class names."""

    pipelines: dict[str, tf.data.Dataset]
    splits: TextSplits
    vectorizer: keras.layers.TextVectorization

    @property
    def class_names(self) -> list[str]:
        return self.splits.class_names

    @property
    def sequence_length(self) -> int:
        """The token cap: `text.sequence_length`, or what `auto` resolved to."""
        return int(self.vectorizer.get_config()["output_sequence_length"])


def build_datasets(
    dataset: DatasetConfig | Mapping[str, Any],
    text: TextConfig | Mapping[str, Any],
    batch_size: int,
    seed: int,
    pad_to_cap: bool = False,
    vocabulary: list[str] | None = None,
    tokenizer=None,
) -> Datasets:
    """Loads the splits, adapts the vectorizer on train and builds the tf.data pipelines.

    The sections may be config sections or plain mappings of them (checked the same way:
    a bad key or value is a ConfigError). `pad_to_cap` pads every batch to the sequence
    length cap, for models that see padding (`model.mask_zero: false`); by default batches
    are padded to their longest text (see `make_pipelines`). A `vocabulary` (a pretrained
    encoder's) is used as it is instead of adapting one on the training texts; a
    `tokenizer` (a checkpoint's `WordPieceTokenizer`) replaces the vectoriser.

    Example:
    >>> # data = build_datasets({"name": "reuters_r8"}, {"sequence_length": 128}, 32, seed=0)
    >>> # data.pipelines["train"], data.class_names
    """
    splits = load_text_splits(DatasetConfig.of(dataset))
    vectorizer = make_vectorizer(TextConfig.of(text), splits.train[0], vocabulary, tokenizer)
    pipelines = make_pipelines(splits, vectorizer, batch_size, seed, pad_to_cap)
    return Datasets(pipelines=pipelines, splits=splits, vectorizer=vectorizer)
