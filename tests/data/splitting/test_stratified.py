import numpy as np
import pytest

from data.splitting.stratified import (
    carve_missing_splits,
    grouped_split,
    stratified_split,
)

LABELS = np.array(["a"] * 70 + ["b"] * 25 + ["c"] * 5)


def test_stratified_split_sizes_and_class_shares():
    rest, validation, test = stratified_split(LABELS, [0.1, 0.2], seed=0)
    assert (len(rest), len(validation), len(test)) == (70, 10, 20)
    assert sorted(np.concatenate([rest, validation, test]).tolist()) == list(range(100))
    # Exact shares: a 7/14, b 2.5/5 (largest remainder), c 0.5/1.
    validation_counts = {name: int(np.sum(LABELS[validation] == name)) for name in "abc"}
    test_counts = {name: int(np.sum(LABELS[test] == name)) for name in "abc"}
    assert validation_counts["a"] == 7 and test_counts == {"a": 14, "b": 5, "c": 1}
    assert validation_counts["b"] + validation_counts["c"] == 3


def test_stratified_split_is_deterministic_given_the_seed():
    first = stratified_split(LABELS, [0.1], seed=3)
    again = stratified_split(LABELS, [0.1], seed=3)
    other = stratified_split(LABELS, [0.1], seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(first[1], other[1])


def test_a_class_always_keeps_a_training_document():
    labels = np.array(["a"] * 9 + ["rare"])
    for seed in range(5):
        rest, held = stratified_split(labels, [0.5], seed=seed)
        assert "rare" in labels[rest]


def test_groups_stay_on_one_side():
    texts = np.array([f"text {index % 40}" for index in range(100)], dtype=object)
    labels = np.array([index % 40 % 2 for index in range(100)])
    rest, held = stratified_split(labels, [0.25], seed=0, groups=texts)
    assert not set(texts[rest]) & set(texts[held])
    assert len(set(texts[held])) == 10  # 25% of the 40 distinct texts


def test_grouped_split_keeps_groups_apart_and_is_deterministic():
    groups = np.array([f"movie {index // 7}" for index in range(200)])
    rest, validation, test = grouped_split(groups, [0.1, 0.1], seed=0)
    assert len(rest) + len(validation) + len(test) == 200
    assert 20 <= len(validation) < 27 and 20 <= len(test) < 27
    parts = [set(groups[part]) for part in (rest, validation, test)]
    assert not parts[0] & parts[1] and not parts[0] & parts[2] and not parts[1] & parts[2]
    again = grouped_split(groups, [0.1, 0.1], seed=0)
    assert all(np.array_equal(a, b) for a, b in zip((rest, validation, test), again, strict=True))


@pytest.mark.parametrize("given", [{}, {"validation"}, {"test"}])
def test_carve_missing_splits_only_fills_what_is_missing(given):
    texts = np.array([f"text {index}" for index in range(50)], dtype=object)
    labels = np.arange(50) % 2
    splits = {"train": (texts, labels)}
    for split in given:
        splits[split] = (np.array(["given"], dtype=object), np.array([0]))
    result = carve_missing_splits(splits, 0.2, 0.1, seed=0)
    assert list(result) == ["train", "validation", "test"]
    sizes = {split: len(labels) for split, (_, labels) in result.items()}
    expected = {"validation": 10, "test": 5}
    for split in given:
        expected[split] = 1
    assert sizes["validation"] == expected["validation"] and sizes["test"] == expected["test"]
    assert sizes["train"] == 50 - sum(
        10 if s == "validation" else 5 for s in expected if s not in given
    )
