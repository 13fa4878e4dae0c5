"""The one entry point from dataset and text specs to training-ready pipelines."""

import dataclasses
from collections.abc import Mapping
from typing import Any

import keras
import tensorflow as tf

from data.dataset_spec import DatasetSpec
from data.loading import load_text_splits
from data.pipelines import make_pipelines
from data.text_spec import TextSpec
from data.text_splits import TextSplits
from data.vectorizer import make_vectorizer


@dataclasses.dataclass
class Datasets:
    """Pipelines of the three splits, their raw text, the adapted vectorizer, class names."""

    pipelines: dict[str, tf.data.Dataset]
    splits: TextSplits
    vectorizer: keras.layers.TextVectorization

    @property
    def class_names(self) -> list[str]:
        return self.splits.class_names


def build_datasets(
    dataset_spec: DatasetSpec | Mapping[str, Any],
    text_spec: TextSpec | Mapping[str, Any],
    batch_size: int,
    seed: int,
) -> Datasets:
    """Loads the splits, adapts the vectorizer on train and builds the tf.data pipelines.

    Specs may be dataclasses or plain config mappings (unknown keys are a DataError).

    Example:
    >>> # data = build_datasets({"name": "reuters_r8"}, {"sequence_length": 128}, 32, seed=0)
    >>> # data.pipelines["train"], data.class_names
    """
    if not isinstance(dataset_spec, DatasetSpec):
        dataset_spec = DatasetSpec.from_dict(dataset_spec)
    if not isinstance(text_spec, TextSpec):
        text_spec = TextSpec.from_dict(text_spec)
    splits = load_text_splits(dataset_spec)
    vectorizer = make_vectorizer(text_spec, splits.train[0])
    pipelines = make_pipelines(splits, vectorizer, batch_size=batch_size, seed=seed)
    return Datasets(pipelines=pipelines, splits=splits, vectorizer=vectorizer)
