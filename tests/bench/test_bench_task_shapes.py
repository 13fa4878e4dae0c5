"""bench_task_shapes: its baselines on small made-up splits, and its STS-B reading."""

import sys
from pathlib import Path

import numpy as np

from tokenization.pairs import join_pair

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_task_shapes  # noqa: E402


def test_the_pair_baseline_sees_both_sides():
    # The label is whether the sides share their word: no single side tells it.
    rng = np.random.default_rng(0)
    words = ["apple", "river", "cloud", "stone", "grass", "light"]
    splits = {}
    for name, size in (("train", 400), ("validation", 100), ("test", 100)):
        firsts = rng.choice(words, size)
        same = rng.random(size) < 0.5
        seconds = np.where(same, firsts, rng.choice(words, size))
        texts = [join_pair(f"the {a}", f"a {b}") for a, b in zip(firsts, seconds)]
        splits[name] = (np.array(texts, dtype=object), (firsts == seconds).astype(int))
    result = bench_task_shapes.pair_baseline(splits)
    assert result["test"] >= 0.9 and result["C"] in bench_task_shapes.C_VALUES


def test_the_label_set_baseline_scores_micro_f1():
    rng = np.random.default_rng(1)
    words = np.array(["goal", "vote", "chip"])
    splits = {}
    for name, size in (("train", 300), ("validation", 100), ("test", 100)):
        labels = (rng.random((size, 3)) < 0.4).astype(float)
        texts = [" ".join(["the"] + list(words[row > 0])) for row in labels]
        splits[name] = (np.array(texts, dtype=object), labels)
    result = bench_task_shapes.label_set_baseline(splits)
    assert result["test"] == 1.0 and 0 < result["validation"] <= 1
