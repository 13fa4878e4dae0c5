"""Weak slices on micro-F1: the number is scikit-learn's, a slice that is worse is found,
and slices that are not (whose texts err together, label after label) are not."""

import numpy as np
from sklearn.metrics import f1_score

from inspection.methods.label_set_slices import (
    decision_counts,
    measure_label_set_slices,
    micro_f1,
)
from inspection.methods.slices import Slice, slice_p_value


def clustered_decisions(rng, examples, labels=4, wrong=0.15):
    """Gold and predicted sets where a misread text gets all its labels wrong at once."""
    gold = rng.random((examples, labels)) < 0.4
    misread = rng.random(examples) < wrong
    predicted = np.where(misread[:, None], ~gold, gold)
    return gold, predicted


def test_a_slices_micro_f1_is_scikit_learns_on_its_rows():
    rng = np.random.default_rng(0)
    gold = rng.random((300, 5)) < 0.3
    predicted = np.where(rng.random((300, 5)) < 0.2, ~gold, gold)
    inside = rng.random(300) < 0.3
    report = measure_label_set_slices(
        [Slice("some", "pattern", inside)], *decision_counts(gold, predicted)
    )
    entry = report["slices"][0]
    assert entry["micro_f1"] == f1_score(gold[inside], predicted[inside], average="micro")
    assert entry["rest_micro_f1"] == f1_score(gold[~inside], predicted[~inside], average="micro")
    assert report["micro_f1"] == f1_score(gold, predicted, average="micro")
    low, high = entry["micro_f1_ci"]
    assert low < entry["micro_f1"] < high
    assert micro_f1([0], [0]) == 1.0  # no label given or predicted: nothing wrong


def test_a_worse_slice_is_weak_and_random_slices_are_not():
    rng = np.random.default_rng(1)
    gold, predicted = clustered_decisions(rng, 2000)
    planted = np.arange(2000) < 100
    predicted[planted] = np.where(rng.random((100, 4)) < 0.5, ~gold[planted], gold[planted])
    slices = [Slice("planted", "pattern", planted)] + [
        Slice(f"random {index}", "pattern", rng.random(2000) < 0.1) for index in range(200)
    ]
    report = measure_label_set_slices(slices, *decision_counts(gold, predicted))
    assert [entry["slice"] for entry in report["weak_slices"]] == ["planted"]
    assert report["slices"][0]["slice"] == "planted"  # the most excess errors


def test_the_uncorrected_p_values_hold_their_level_when_a_texts_labels_err_together():
    """Under no difference, about 5% of slices have p under 0.05. Counting each decision
    as independent (Fisher's test on the pooled counts) would call far more."""
    rng = np.random.default_rng(2)
    gold, predicted = clustered_decisions(rng, 1500)
    slices = [Slice(f"random {index}", "pattern", rng.random(1500) < 0.1) for index in range(400)]
    report = measure_label_set_slices(slices, *decision_counts(gold, predicted))
    below = np.mean([entry["p_value"] < 0.05 for entry in report["slices"]])
    assert 0.02 <= below <= 0.09  # measured: 0.0425
    right, counted = decision_counts(gold, predicted)
    pooled = [
        slice_p_value(
            int(counted[item.members].sum()),
            int(right[item.members].sum()),
            int(counted.sum()),
            int(right.sum()),
        )
        for item in slices
    ]
    assert np.mean(np.array(pooled) < 0.05) > 0.12  # measured: 0.1925
