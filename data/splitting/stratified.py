"""Seeded, deterministic ways to carve held-out splits out of a list of documents."""

from collections.abc import Sequence

import numpy as np

from data.splitting.hashed import carve_by_hash


def stratified_split(
    labels: Sequence, fractions: Sequence[float], seed: int, groups: Sequence | None = None
) -> list[np.ndarray]:
    """Splits document indices into a remainder and held-out parts with the same class mix.

    Each held-out part gets round(units * fraction) units, shared out across classes by the
    largest-remainder method, so every class keeps its share even when it is tiny (and at
    least one unit in the remainder). Documents
    with the same `groups` value form one unit and always land in the same part (pass the
    texts to keep exact duplicates together); a unit counts under its first document's label.

    Args:
        labels: one label per document.
        fractions: size of each held-out part, as a fraction of the units.
        seed: seeds the choice of units; same inputs and seed, same split.
        groups: optional group key per document.

    Returns:
        `[remainder, part_1, ...]`, sorted int64 index arrays that cover every document once.

    Example:
    >>> rest, held = stratified_split(["a"] * 8 + ["b"] * 2, [0.5], seed=0)
    >>> len(held), sorted(set(rest) | set(held)) == list(range(10))
    (5, True)
    """
    labels = np.asarray(labels)
    if groups is None:
        unit_of_document = np.arange(len(labels))
        unit_labels = labels
    else:
        _, first_document, unit_of_document = np.unique(
            np.asarray(groups), return_index=True, return_inverse=True
        )
        unit_labels = labels[first_document]
    classes = np.unique(unit_labels)
    class_sizes = np.array([np.sum(unit_labels == name) for name in classes])
    num_units = len(unit_labels)

    # (classes, parts): floors first, then the leftover units go to the largest remainders.
    exact = class_sizes[:, None] * np.asarray(fractions, dtype=np.float64)[None, :]
    quotas = np.floor(exact).astype(np.int64)
    for part, fraction in enumerate(fractions):
        missing = int(round(num_units * fraction)) - int(quotas[:, part].sum())
        order = np.lexsort((np.arange(len(classes)), -(exact[:, part] - quotas[:, part])))
        for class_index in order:
            if missing <= 0:
                break
            # Every class keeps at least one unit in the remainder (the training data).
            if quotas[class_index].sum() < class_sizes[class_index] - 1:
                quotas[class_index, part] += 1
                missing -= 1

    rng = np.random.default_rng(seed)
    part_of_unit = np.zeros(num_units, dtype=np.int64)  # 0 = remainder
    for class_index, name in enumerate(classes):
        units = rng.permutation(np.flatnonzero(unit_labels == name))
        start = 0
        for part in range(len(fractions)):
            part_of_unit[units[start : start + quotas[class_index, part]]] = part + 1
            start += quotas[class_index, part]
    part_of_document = part_of_unit[unit_of_document]
    return [np.flatnonzero(part_of_document == part) for part in range(len(fractions) + 1)]


def grouped_split(groups: Sequence, fractions: Sequence[float], seed: int) -> list[np.ndarray]:
    """Splits document indices so that no group (e.g. a movie) is in two parts.

    Groups are taken in a seeded random order and fill each held-out part until it holds at
    least round(documents * fraction) documents, so part sizes are close to, not exactly,
    the fractions.

    Example:
    >>> movies = np.array(["m1", "m1", "m2", "m3"])
    >>> rest, held = grouped_split(movies, [0.25], seed=0)
    >>> set(movies[rest]).isdisjoint(movies[held])
    True
    """
    groups = np.asarray(groups)
    names, group_of_document, group_sizes = np.unique(
        groups, return_inverse=True, return_counts=True
    )
    order = np.random.default_rng(seed).permutation(len(names))
    part_of_group = np.zeros(len(names), dtype=np.int64)
    targets = np.cumsum([int(round(len(groups) * fraction)) for fraction in fractions])
    filled = 0
    part = 0
    for group in order:
        if part == len(fractions):
            break
        part_of_group[group] = part + 1
        filled += group_sizes[group]
        while part < len(fractions) and filled >= targets[part]:
            part += 1
    part_of_document = part_of_group[group_of_document]
    return [np.flatnonzero(part_of_document == part) for part in range(len(fractions) + 1)]


def carve_missing_splits(
    splits: dict[str, tuple[np.ndarray, ...]],
    validation_fraction: float,
    test_fraction: float,
    seed: int,
) -> dict[str, tuple[np.ndarray, ...]]:
    """Fills in a missing "validation" and/or "test" from "train", stratified by label.

    Identical texts stay on one side, so a repeated document cannot leak across splits.
    A split is (texts, labels), or (texts, labels, *more per-row arrays) cut alike (the
    columns `dataset.slice_columns` names).

    Example:
    >>> texts = np.array([f"text {index}" for index in range(10)], dtype=object)
    >>> splits = carve_missing_splits({"train": (texts, np.arange(10) % 2)}, 0.2, 0.2, seed=0)
    >>> {split: len(labels) for split, (_, labels) in splits.items()}
    {'train': 6, 'validation': 2, 'test': 2}
    """
    carved = [split for split in ("validation", "test") if split not in splits]
    if not carved:
        return dict(splits)
    fractions = {"validation": validation_fraction, "test": test_fraction}
    texts, labels = splits["train"][:2]
    strata = labels if labels.ndim == 1 else rarest_labels(labels)
    parts = stratified_split(strata, [fractions[split] for split in carved], seed, groups=texts)
    result = dict(splits)
    for split, indices in zip(("train", *carved), parts, strict=True):
        result[split] = tuple(values[indices] for values in splits["train"])
    return {split: result[split] for split in ("train", "validation", "test")}


def rarest_labels(multi_hot: np.ndarray) -> np.ndarray:
    """Each multi-label row's rarest label (the fewest rows have it), -1 for a row without
    one: the stratum that keeps every rare label's share when splits are carved.

    Example:
    >>> rarest_labels(np.array([[1, 1], [1, 0], [0, 0], [1, 0]])).tolist()
    [1, 0, -1, 0]
    """
    counts = multi_hot.sum(axis=0)
    weighted = np.where(multi_hot > 0, counts[None, :], np.inf)
    return np.where(multi_hot.any(axis=1), weighted.argmin(axis=1), -1)


def carve_splits(
    method: str, splits: dict, validation_fraction: float, test_fraction: float, seed: int
) -> dict:
    """Missing validation/test splits carved out of train in memory: `method` "stratified"
    (`carve_missing_splits`) or "hash" (`hashed.carve_by_hash`)."""
    carver = carve_by_hash if method == "hash" else carve_missing_splits
    return carver(splits, validation_fraction, test_fraction, seed)
