"""The weak-slice numbers (inspection/methods/slices.py) on hand-made texts and outcomes."""

import math

import numpy as np
import pytest

from inspection.methods.slices import (
    Slice,
    candidate_slices,
    measure_slices,
)

TEXTS = [
    "A GOOD film, 10 out of 10",  # 0: digits, all caps (GOOD)
    "see https://example.org now",  # 1: URL
    "I liked it",  # 2: "I" is one letter: not all caps
    "great great film",  # 3
    "visit www.films.com 4 more",  # 4: URL and digits
    "the film was NOT good at all really",  # 5: all caps
    "Café ÉTÉ film",  # 6: all caps beyond ASCII
    "ok",  # 7
]


def members(found, name):
    return next(item for item in found if item.name == name).members.nonzero()[0].tolist()


def test_membership_of_every_kind_on_hand_made_texts():
    labels = [1, 1, 1, 1, 0, 0, 0, 0]
    genre = ["drama", "drama", "comedy", "drama", "comedy", "drama", "horror", "drama"]
    found = candidate_slices(TEXTS, labels, ["neg", "pos"], {"genre": genre}, min_count=1)
    assert members(found, "has digits") == [0, 4]
    assert members(found, "has URL") == [1, 4]
    assert members(found, "has all-caps word") == [0, 5, 6]
    assert members(found, "label: neg") == [4, 5, 6, 7]
    assert members(found, "word: film") == [0, 3, 5, 6]  # "great great film": counted once
    assert members(found, "word: good") == [0, 5]  # lowercased
    assert members(found, "column genre = drama") == [0, 1, 3, 5, 7]
    assert members(found, "column genre = horror") == [6]
    # Word counts (\w+ runs: "https", "example", "org") 7, 5, 3, 3, 6, 8, 3, 1: quintile
    # edges floor(3, 3, 5.2, 6.6) = 3, 5, 6; a count on an edge is in the band below it.
    lengths = [
        (item.name, item.members.nonzero()[0].tolist()) for item in found if item.kind == "length"
    ]
    assert lengths == [
        ("length: 1-3 words", [2, 3, 6, 7]),
        ("length: 5 words", [1]),
        ("length: 6 words", [4]),
        ("length: 7-8 words", [0, 5]),
    ]
    assert {item.kind for item in found} == {"label", "pattern", "length", "column", "word"}


def test_a_slice_of_too_few_examples_or_of_every_example_is_left_out():
    found = candidate_slices(
        TEXTS,
        [1] * 4 + [0] * 4,
        ["neg", "pos"],
        {"genre": ["drama"] * 5 + ["comedy"] * 3},
        min_count=3,
    )
    names = [item.name for item in found]
    assert "column genre = drama" in names and "column genre = comedy" in names
    assert "has digits" not in names  # 2 examples
    assert "has all-caps word" in names  # 3
    assert "word: film" in names and "word: good" not in names
    every = candidate_slices(["same text"] * 4, [0, 1, 0, 1], ["neg", "pos"], min_count=1)
    assert not any(item.kind == "word" for item in every)  # "same" is in every text


def planted(size=1000, slice_size=50, slice_right=38, overall_wrong=100):
    """Outcomes where the first `slice_size` examples have `slice_right` right and the
    whole has `overall_wrong` wrong."""
    correct = np.ones(size, dtype=bool)
    correct[: slice_size - slice_right] = False
    correct[100 : 100 + overall_wrong - (slice_size - slice_right)] = False
    return correct, Slice("first", "pattern", np.arange(size) < slice_size)


def test_accuracy_gap_and_excess_errors_are_the_direct_ones():
    correct, first = planted()
    report = measure_slices([first], correct)
    assert report["examples"] == 1000 and report["accuracy"] == 0.9
    entry = report["slices"][0]
    assert entry["size"] == 50 and entry["accuracy"] == 38 / 50
    assert entry["gap"] == pytest.approx(0.9 - 0.76)
    assert entry["excess_errors"] == pytest.approx(50 * 0.9 - 38)  # 7 errors beyond 10%
    # p: twice the bootstrap chance of 45 or more right of 50 (0.9 of them).
    tail = sum(math.comb(50, k) * 0.76**k * 0.24 ** (50 - k) for k in range(45, 51))
    assert entry["p_value"] == pytest.approx(2 * tail)


def test_a_slice_below_only_before_the_correction_is_not_weak():
    correct, first = planted()
    alone = measure_slices([first], correct)
    assert alone["slices"][0]["accuracy_ci"] == [0.64, 0.88]  # below 0.9
    assert alone["slices"][0]["weak"] and alone["weak_slices"][0]["slice"] == "first"
    # Twenty more slices of the accurate examples: the level becomes 1 - 0.05 / 21.
    others = [
        Slice(
            f"other {index}",
            "pattern",
            (np.arange(1000) >= 300 + 30 * index) & (np.arange(1000) < 330 + 30 * index),
        )
        for index in range(20)
    ]
    report = measure_slices([first, *others], correct)
    entry = next(entry for entry in report["slices"] if entry["slice"] == "first")
    assert entry["accuracy_ci"] == [0.64, 0.88]
    low, high = entry["corrected_ci"]
    assert high == 0.92  # not below 0.9 (test_bootstrap checks the exact quantiles)
    assert not entry["weak"] and report["weak_slices"] == []
    assert entry["p_value"] > 0.05 / 21
    assert report["correction"].startswith("Bonferroni over 21 candidate slices")
    assert len(report["slices"]) == 21


def test_weak_slices_rank_by_size_times_gap():
    correct = np.ones(2000, dtype=bool)
    correct[:40] = False  # "small": 40 of 40 wrong, gap 0.97 x 40 = 38.8 excess errors
    correct[100:160] = False  # "large": 60 of 200 wrong (0.7), gap 0.27 x 200 = 54
    index = np.arange(2000)
    slices = [
        Slice("small", "word", index < 40),
        Slice("large", "word", (index >= 100) & (index < 300)),
        Slice("fine", "word", index >= 1000),
    ]
    report = measure_slices(slices, correct)
    assert report["accuracy"] == 0.95
    assert [entry["slice"] for entry in report["weak_slices"]] == ["large", "small"]
    assert [entry["excess_errors"] for entry in report["weak_slices"]] == pytest.approx(
        [200 * 0.95 - 140, 40 * 0.95]
    )
    assert [entry["slice"] for entry in report["slices"]] == ["large", "small", "fine"]
    assert report["slices"][2]["gap"] == pytest.approx(-0.05)  # better than the whole
