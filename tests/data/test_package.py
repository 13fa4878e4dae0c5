"""data/__init__.py: importing the package loads nothing; each public name comes from its
owner on first use."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_importing_data_loads_neither_tensorflow_nor_the_data_modules():
    code = (
        "import sys, data; from data import DataError; "
        "print(sorted(m for m in sys.modules if m in ('tensorflow', 'keras', 'data.datasets', "
        "'data.builders')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
    assert result.stderr == ""


def test_each_public_name_is_its_owners():
    import data
    from data.pipelines.in_memory import make_pipelines
    from runtime.errors import DataError

    assert data.DataError is DataError
    assert data.make_pipelines is make_pipelines
    assert set(data.__all__) <= set(dir(data))


def test_an_unknown_name_is_an_attribute_error():
    import data

    with pytest.raises(AttributeError, match="no attribute 'build_dataset'"):
        data.build_dataset  # noqa: B018
