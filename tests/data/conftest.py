"""Shared fixtures: the built-in datasets' splits, loaded once per test session (from
`builtin_data_dir`, tests/conftest.py)."""

import pytest

from config import DatasetConfig
from data import load_text_splits


@pytest.fixture(scope="session")
def builtin_splits(builtin_data_dir):
    """`builtin_splits(name)` -> TextSplits, loaded once per session."""
    cache = {}

    def load(name):
        if name not in cache:
            cache[name] = load_text_splits(DatasetConfig(name=name, data_dir=builtin_data_dir))
        return cache[name]

    return load
