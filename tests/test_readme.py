"""The README's Python examples run as written."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")


def python_blocks():
    with open(README, encoding="utf-8") as file:
        return re.findall(r"```python\n(.*?)```", file.read(), flags=re.DOTALL)


def test_readme_has_a_python_example():
    assert python_blocks()


def test_readme_python_examples_run(tmp_path):
    for block in python_blocks():
        completed = subprocess.run(
            [sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True,
            timeout=300, env={**os.environ, "PYTHONPATH": ROOT},  # As `make` runs it.
        )
        assert completed.returncode == 0, completed.stderr[-2000:]
