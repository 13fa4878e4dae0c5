"""Shared fixtures: the built-in datasets' splits, loaded once per test session (from
`builtin_data_dir`, tests/conftest.py)."""

import pytest

from config import DatasetConfig


@pytest.fixture(scope="session")
def builtin_splits(builtin_data_dir):
    """`builtin_splits(name)` -> TextSplits, loaded once per session."""
    from data import load_text_splits  # TensorFlow: not in pytest-xdist's controller

    cache = {}

    def load(name):
        if name not in cache:
            cache[name] = load_text_splits(DatasetConfig(name=name, data_dir=builtin_data_dir))
        return cache[name]

    return load
