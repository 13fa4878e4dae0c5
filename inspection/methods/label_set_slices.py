"""Weak slices of a multi-label classifier, on micro-F1.

The candidate slices are `slices.candidate_slices`'; what is measured differs. Micro-F1
pools every (example, label) decision: 2 TP / (2 TP + FP + FN). Of the decisions that
count (TP, FP or FN: a label given by the data, by the model, or both), the share right is
q = TP / (TP + FP + FN), and micro-F1 = 2q / (1 + q) rises with it; a slice is weak when
its q is lower than the rest's.

The decisions of one text are not independent (a text the model misreads gets several
labels wrong), so the test treats each example as a cluster: q is a ratio of sums over
examples, its variance the cluster-robust (linearised) one, sum of (right_i - q
counted_i)^2 / (sum of counted_i)^2 times m / (m - 1) over the m examples, and the test
of slice against rest a one-sided z-test on the difference. Bonferroni over the slices,
as for accuracy; the interval is q's normal one, carried to micro-F1.

Letter legend: E examples, S slices.
"""

import numpy as np
from scipy.stats import norm

from inspection.methods.slices import ALPHA, LEVEL, check_slices, correction_sentence

TEST = "the cluster-robust z-test"


def decision_counts(gold, predicted):
    """(right, counted) per example: its true positives, and its TP + FP + FN.

    Example:
    >>> gold = np.array([[1, 0, 1], [0, 0, 0]], bool)
    >>> decision_counts(gold, np.array([[1, 1, 0], [0, 0, 0]], bool))
    (array([1, 0]), array([3, 0]))
    """
    gold, predicted = np.asarray(gold, bool), np.asarray(predicted, bool)
    return (gold & predicted).sum(axis=1), (gold | predicted).sum(axis=1)


def micro_f1(right, counted) -> float:
    """2 TP / (2 TP + FP + FN) of the pooled decisions; 1.0 when none counts (no label
    given by the data or the model: nothing was got wrong)."""
    right, counted = np.sum(right), np.sum(counted)
    return 1.0 if counted == 0 else float(2 * right / (right + counted))


def ratio_and_variance(right, counted):
    """(q, its cluster-robust variance) of the examples' summed `right` / `counted`."""
    right, counted = np.asarray(right, float), np.asarray(counted, float)
    total = counted.sum()
    if total == 0:
        return 1.0, 0.0
    share = right.sum() / total
    m = len(right)
    spread = ((right - share * counted) ** 2).sum() / total**2
    return float(share), float(spread * m / (m - 1)) if m > 1 else 0.0


def one_sided_p(share, variance, rest_share, rest_variance) -> float:
    """The z-test's p that the slice's q is lower than the rest's only by chance."""
    spread = np.sqrt(variance + rest_variance)
    if spread == 0:
        return 0.0 if share < rest_share else 1.0
    return float(norm.cdf((share - rest_share) / spread))


def measure_label_set_slices(slices, right, counted, alpha=ALPHA):
    """Each slice's micro-F1, interval and test against the rest; the weak ones.

    Args:
        slices: `slices.Slice`s of the examples, each holding some of them and not all.
        right, counted: `decision_counts` per example (E,).

    Returns:
        `slices.measure_slices`' report with micro-F1 in place of accuracy: "metric":
        "micro_f1", "micro_f1"; per slice "micro_f1", "micro_f1_ci", "rest_micro_f1",
        "decisions" (its TP + FP + FN), and "excess_errors": the wrong decisions beyond
        those the overall share right would give it.

    Example:
    >>> right = np.array([2] * 60 + [0] * 20 + [2] * 20)  # examples 60-79: all wrong
    >>> counted = np.full(100, 2)
    >>> from inspection.methods.slices import Slice
    >>> found = [Slice("middle", "pattern", (np.arange(100) >= 50) & (np.arange(100) < 90))]
    >>> entry = measure_label_set_slices(found, right, counted)["slices"][0]
    >>> round(entry["micro_f1"], 3), entry["weak"], entry["decisions"]
    (0.667, True, 80)
    """
    right, counted = np.asarray(right), np.asarray(counted)
    check_slices(slices, len(right))
    share, _ = ratio_and_variance(right, counted)
    threshold, entries = alpha / max(1, len(slices)), []
    z = norm.ppf(0.5 + LEVEL / 2)
    for item in slices:
        inside = np.asarray(item.members, bool)
        mine, variance = ratio_and_variance(right[inside], counted[inside])
        rest, rest_variance = ratio_and_variance(right[~inside], counted[~inside])
        low, high = (np.clip(mine + sign * z * np.sqrt(variance), 0, 1) for sign in (-1, 1))
        p_value = one_sided_p(mine, variance, rest, rest_variance)
        decisions = int(counted[inside].sum())
        entries.append(
            {
                "slice": item.name,
                "kind": item.kind,
                "size": int(inside.sum()),
                "decisions": decisions,
                "micro_f1": micro_f1(right[inside], counted[inside]),
                "micro_f1_ci": [float(2 * low / (1 + low)), float(2 * high / (1 + high))],
                "rest_micro_f1": micro_f1(right[~inside], counted[~inside]),
                "gap": micro_f1(right, counted) - micro_f1(right[inside], counted[inside]),
                "excess_errors": decisions * share - float(right[inside].sum()),
                "p_value": p_value,
                "weak": p_value <= threshold,
            }
        )
    entries.sort(key=lambda entry: (-entry["excess_errors"], entry["slice"]))
    return {
        "examples": len(right),
        "metric": "micro_f1",
        "micro_f1": micro_f1(right, counted),
        "correction": correction_sentence(len(slices), alpha, TEST, "micro-F1 is lower"),
        "alpha": alpha,
        "weak_slices": [entry for entry in entries if entry["weak"]],
        "slices": entries,
    }
