"""The weak-slice numbers (inspection/methods/slices.py) on hand-made texts and outcomes."""

import math

import numpy as np
import pytest
from scipy.stats import beta, fisher_exact
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from inspection.methods.slices import (
    Slice,
    candidate_slices,
    class_specific,
    measure_slices,
    slice_p_value,
    word_slices,
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


def test_membership_of_every_kind_but_words_on_hand_made_texts():
    labels = [1, 1, 1, 1, 0, 0, 0, 0]
    genre = ["drama", "drama", "comedy", "drama", "comedy", "drama", "horror", "drama"]
    found = candidate_slices(TEXTS, labels, ["neg", "pos"], {"genre": genre}, min_count=1)
    assert members(found, "has digits") == [0, 4]
    assert members(found, "has URL") == [1, 4]
    assert members(found, "has all-caps word") == [0, 5, 6]
    assert members(found, "label: neg") == [4, 5, 6, 7]
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
    # Eight texts: no word's labels differ from the whole's at p 0.05 ("film": 2 and 2).
    assert {item.kind for item in found} == {"label", "pattern", "length", "column"}


# Ten texts per row: "good" only in positive ones, "bad" (once "Bad") only in negative
# ones, "film" and "the" in both alike, the stop word "not" in negative ones only.
LABELLED = [
    ("GOOD good film", 1),
    ("good the", 1),
    ("Bad film not the", 0),
    ("bad not", 0),
] * 10


def test_word_slices_are_lowercased_class_specific_and_never_stop_words():
    texts, labels = zip(*LABELLED)
    found = candidate_slices(texts, labels, ["neg", "pos"], min_count=5)
    words = {item.name: item.members.nonzero()[0].tolist() for item in found if item.kind == "word"}
    assert words == {
        "word: bad": [index for index in range(40) if index % 4 >= 2],
        "word: good": [index for index in range(40) if index % 4 < 2],  # counted once
    }
    assert "not" in ENGLISH_STOP_WORDS  # as class-specific as "bad", yet left out


def test_a_slice_of_too_few_examples_or_of_every_example_is_left_out():
    found = candidate_slices(
        TEXTS,
        [1] * 4 + [0] * 4,
        ["neg", "pos"],
        {"genre": ["drama"] * 5 + ["comedy"] * 3, "format": ["film"] * 8},
        min_count=3,
    )
    names = [item.name for item in found]
    assert "column genre = drama" in names and "column genre = comedy" in names
    assert "has digits" not in names  # 2 examples
    assert "has all-caps word" in names  # 3
    assert "column format = film" not in names  # every example


def test_the_words_in_the_most_texts_are_kept_ties_by_word():
    rows = [["alpha", "beta"]] * 30 + [["gamma"]] * 20 + [["delta"]] * 30 + [["zeta"]] * 60
    labels = [1] * 80 + [0] * 60  # zeta alone is in negative texts
    kept = word_slices(rows, labels, min_count=20, most=2)
    assert [item.name for item in kept] == ["word: zeta", "word: alpha"]
    assert [item.members.sum() for item in kept] == [60, 30]


def test_class_specificity_is_pearsons_chi_square_against_the_label_shares():
    labels = np.repeat([0, 1, 2], 100)  # a third each
    counts = {"spread": (10, 10, 10), "skewed": (20, 5, 5), "mild": (14, 8, 8)}
    rows = []
    for per_label in counts.values():
        row = np.zeros(300, dtype=bool)
        for label, count in enumerate(per_label):
            row[100 * label : 100 * label + count] = True
        rows.append(row)
    # Against 10 each, df 2: p = exp(-chi2 / 2); chi2 0, 15 and 2.4.
    assert math.exp(-15 / 2) < 0.05 < math.exp(-2.4 / 2)
    assert class_specific(np.array(rows), labels).tolist() == [False, True, False]
    # Against the shares of the texts (3 of 4 are label 0), not a uniform spread: 30 and
    # 10 are in proportion (chi2 0), where against 20 and 20 chi2 would be 10.
    uneven = np.array([0] * 300 + [1] * 100)
    in_proportion = np.isin(np.arange(400), np.r_[0:30, 300:310])  # 30 and 10
    assert class_specific(in_proportion[None], uneven).tolist() == [False]
    assert class_specific(in_proportion[None], np.zeros(400)).tolist() == [False]  # one label


def planted(size=1000, slice_size=50, slice_right=38, overall_wrong=100):
    """Outcomes where the first `slice_size` examples have `slice_right` right and the
    whole has `overall_wrong` wrong."""
    correct = np.ones(size, dtype=bool)
    correct[: slice_size - slice_right] = False
    correct[100 : 100 + overall_wrong - (slice_size - slice_right)] = False
    return correct, Slice("first", "pattern", np.arange(size) < slice_size)


def test_accuracy_interval_gap_excess_errors_and_fishers_p_value():
    correct, first = planted()
    report = measure_slices([first], correct)
    assert report["examples"] == 1000 and report["accuracy"] == 0.9
    entry = report["slices"][0]
    assert entry["size"] == 50 and entry["accuracy"] == 38 / 50
    assert entry["rest_accuracy"] == 862 / 950
    assert entry["gap"] == pytest.approx(0.9 - 0.76)
    assert entry["excess_errors"] == pytest.approx(50 * 0.9 - 38)  # 7 errors beyond 10%
    # Clopper-Pearson from the beta quantiles.
    assert entry["accuracy_ci"] == pytest.approx(
        [beta.ppf(0.025, 38, 13), beta.ppf(0.975, 39, 12)], rel=1e-9
    )
    # Rows slice and rest, columns right and wrong.
    expected = fisher_exact([[38, 12], [862, 88]], alternative="less").pvalue
    assert entry["p_value"] == pytest.approx(expected, rel=1e-12)
    assert 0.0024 < entry["p_value"] < 0.0025


def test_the_p_value_is_the_hypergeometric_tail():
    # 3 of 6 examples right, the slice of 3 has none: 1 of the C(6, 3) = 20 ways.
    assert slice_p_value(3, 0, 6, 3) == pytest.approx(1 / 20)
    # One right in the slice: also the 9 ways with one of the 3 right ones in it.
    assert slice_p_value(3, 1, 6, 3) == pytest.approx(10 / 20)
    assert slice_p_value(3, 3, 6, 3) == pytest.approx(1.0)  # no slice is less often right


def test_seven_of_ten_against_eighty_percent_is_no_weak_slice_half_of_two_hundred_is():
    index = np.arange(1110)
    correct = np.zeros(1110, dtype=bool)
    correct[:7] = True  # small: 7 of 10 right
    correct[10:110] = index[10:110] < 90  # its rest 80 of 100
    small = measure_slices([Slice("small", "word", index[:110] < 10)], correct[:110])
    assert small["slices"][0]["rest_accuracy"] == 0.8
    assert not small["slices"][0]["weak"] and small["slices"][0]["p_value"] > 0.3
    correct = index % 10 != 0  # 0.9 of the rest right
    correct[:200] = index[:200] % 2 == 0  # large: 100 of 200
    found = [Slice("large", "word", index < 200)]
    found += [Slice(f"filler {number}", "word", index % 9 == number) for number in range(8)]
    report = measure_slices(found, correct)
    assert report["weak_slices"][0]["slice"] == "large"
    assert report["weak_slices"][0]["p_value"] < 1e-30


def test_a_slice_weak_before_a_stricter_correction_is_not_weak_after():
    correct, first = planted()  # p 0.00246
    others = [
        Slice(f"other {index}", "pattern", (np.arange(1000) // 15) == 20 + index)
        for index in range(40)  # examples 300 to 900: all right
    ]
    fewer = measure_slices([first, *others[:10]], correct)  # the level 0.05 / 11 = 0.0045
    assert [entry["slice"] for entry in fewer["weak_slices"]] == ["first"]
    report = measure_slices([first, *others], correct)  # 0.05 / 41 = 0.0012
    entry = next(entry for entry in report["slices"] if entry["slice"] == "first")
    assert not entry["weak"] and report["weak_slices"] == []
    assert report["correction"].startswith("Bonferroni over 41 candidate slices")
    assert report["correction"].endswith("0.05/41 = 0.00122.")


def test_random_slices_of_random_outcomes_are_never_weak():
    rng = np.random.default_rng(0)
    correct = rng.random(2000) < 0.85
    found = [
        Slice(f"random {index}", "column", rng.random(2000) < share)
        for index, share in enumerate(np.linspace(0.01, 0.5, 100))
    ]
    report = measure_slices(found, correct)
    assert report["weak_slices"] == []
    # Exact under the null: about 5% of the p-values at or under 0.05, not more.
    assert np.mean([entry["p_value"] <= 0.05 for entry in report["slices"]]) <= 0.1


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


@pytest.mark.parametrize(
    "chosen, received",
    [(np.zeros(10, dtype=bool), "0 of 10"), (np.ones(10, dtype=bool), "10 of 10"),
     (np.arange(12) < 3, "3 of 12")],
)  # fmt: skip
def test_a_slice_of_no_example_every_example_or_other_examples_is_an_error(chosen, received):
    with pytest.raises(ValueError, match=f"Received: slice 'odd' of {received} examples"):
        measure_slices([Slice("odd", "word", chosen)], np.arange(10) < 5)
