"""bench_shortcuts: the planted and spread files, and the verdict on a run's ranks."""

import csv
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_shortcuts as bench  # noqa: E402


def test_the_word_goes_into_a_tenth_of_one_class_or_of_each(tmp_path, monkeypatch):
    import data

    texts = np.array([f"text number {index} here" for index in range(400)])
    labels = np.array([0] * 300 + [1] * 100)
    split = (texts[:200], labels[:200])
    fake = SimpleNamespace(
        train=split,
        validation=(texts[200:300], labels[200:300]),
        test=(texts[300:], labels[300:]),
        class_names=["neg", "pos"],
    )
    monkeypatch.setattr(data, "load_text_splits", lambda dataset: fake)
    files, names = bench.write_files("any", 1000, tmp_path)
    assert names == ["neg", "pos"]
    for variant, expected in (
        ("planted", {"neg": 0, "pos": 10}),
        ("spread", {"neg": 30, "pos": 10}),
    ):
        with open(files[variant], newline="") as file:
            rows = list(csv.DictReader(file))
        assert len(rows) == 400
        marked = [row["label"] for row in rows if bench.WORD in row["text"].split()]
        assert {name: marked.count(name) for name in names} == expected
        # The word is inserted between words, never glued to one.
        assert all(len(row["text"].split()) in (4, 5) for row in rows)


def test_the_verdict_wants_rank_one_planted_and_nothing_spread():
    names = ["neg", "pos"]
    planted = {
        "file": "x_planted",
        "ranks": {"neg": None, "pos": 1},
        "shortcuts": {"neg": False, "pos": True},
    }
    assert bench.verdict(planted, names)
    assert not bench.verdict({**planted, "ranks": {"neg": None, "pos": 2}}, names)
    spread = {
        "file": "x_spread",
        "ranks": {"neg": 21, "pos": None},
        "shortcuts": {"neg": False, "pos": False},
    }
    assert bench.verdict(spread, names)
    assert not bench.verdict({**spread, "ranks": {"neg": 20, "pos": None}}, names)
    assert not bench.verdict({**spread, "shortcuts": {"neg": True, "pos": False}}, names)
