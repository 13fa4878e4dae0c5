"""bench_shortcuts: the planted, spread and everywhere files, and the verdict on a run's
ranks."""

import csv
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_shortcuts as bench  # noqa: E402


def test_the_word_goes_into_a_tenth_of_one_class_or_of_each_or_nearly_everywhere(
    tmp_path, monkeypatch
):
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
    files, names = bench.write_files("any", 1000, tmp_path, "pos", bench.VARIANTS)
    assert names == ["neg", "pos"]
    for variant, expected in (
        ("planted", {"neg": 0, "pos": 10}),
        ("spread", {"neg": 30, "pos": 10}),
        ("everywhere", {"neg": 288, "pos": 96}),
    ):
        with open(files[variant], newline="") as file:
            rows = list(csv.DictReader(file))
        assert len(rows) == 400
        marked = [row["label"] for row in rows if bench.WORD in row["text"].split()]
        assert {name: marked.count(name) for name in names} == expected
        # The word is inserted between words, never glued to one.
        assert all(len(row["text"].split()) in (4, 5) for row in rows)


def test_the_verdict_wants_the_planted_word_in_the_top_3_and_the_others_out():
    planted = {
        "variant": "planted",
        "ranks": {"neg": None, "pos": 3},
        "shortcuts": {"neg": False, "pos": True},
    }
    assert bench.verdict(planted, "pos")
    assert not bench.verdict({**planted, "ranks": {"neg": None, "pos": 4}}, "pos")
    assert not bench.verdict({**planted, "shortcuts": {"neg": False, "pos": False}}, "pos")
    spread = {
        "variant": "spread",
        "ranks": {"neg": 21, "pos": None},
        "shortcuts": {"neg": False, "pos": False},
    }
    assert bench.verdict(spread, "pos")
    assert not bench.verdict({**spread, "ranks": {"neg": 20, "pos": None}}, "pos")
    assert not bench.verdict({**spread, "shortcuts": {"neg": True, "pos": False}}, "pos")
    everywhere = {**spread, "variant": "everywhere", "ranks": {"neg": 11, "pos": None}}
    assert bench.verdict(everywhere, "pos")
    assert not bench.verdict({**everywhere, "ranks": {"neg": 10, "pos": None}}, "pos")
