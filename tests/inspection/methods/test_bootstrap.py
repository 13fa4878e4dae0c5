"""The bootstrap intervals (inspection/methods/bootstrap.py): the paired resampling and
the exact interval of an accuracy, against direct computations."""

import math

import numpy as np
import pytest

from inspection.methods.bootstrap import accuracy_interval, mean_interval, paired_bootstrap


def test_the_paired_bootstrap_interval_covers_the_mean_and_pairs_the_differences():
    rng = np.random.default_rng(0)
    a = rng.normal(1.0, 1.0, 400)
    summary, difference = paired_bootstrap({"a": a, "b": a - 0.1})
    low, high = summary["a"]["ci95"]
    assert low < a.mean() < high and high - low == pytest.approx(4 * 1.0 / 20, rel=0.25)
    # Paired: the difference is exactly 0.1 in every resample, so its interval is a point.
    assert difference("a", "b")["ci95"] == pytest.approx([0.1, 0.1])
    with pytest.raises(ValueError, match="same examples"):
        paired_bootstrap({"a": a, "b": a[:3]})


def test_the_mean_interval_is_the_paired_bootstraps_of_one_series():
    values = np.random.default_rng(1).normal(0.0, 1.0, 50)
    summary, _ = paired_bootstrap({"values": values}, seed=3)
    assert mean_interval(values, seed=3) == (summary["values"]["mean"], summary["values"]["ci95"])


def exact_quantile(size, rights, level):
    """The smallest count whose Binomial(size, rights / size) CDF reaches `level`, from the
    probabilities themselves (no scipy)."""
    share, total = rights / size, 0.0
    for count in range(size + 1):
        total += math.comb(size, count) * share**count * (1 - share) ** (size - count)
        if total >= level - 1e-12:
            return count
    return size


def test_the_interval_is_the_bootstrap_distributions_percentiles():
    sizes, rights = np.array([40, 25, 60, 30]), np.array([31, 5, 60, 0])
    interval = accuracy_interval(sizes, rights, 0.95)
    assert interval.shape == (4, 2)
    for (low, high), size, right in zip(interval, sizes, rights):
        assert low == exact_quantile(size, right, 0.025) / size
        assert high == exact_quantile(size, right, 0.975) / size
    assert interval[2].tolist() == [1.0, 1.0] and interval[3].tolist() == [0.0, 0.0]
    # Against resampling the examples themselves: the same within one example.
    rng = np.random.default_rng(0)
    outcomes = np.arange(40) < 31
    means = outcomes[rng.integers(0, 40, (100_000, 40))].mean(axis=1)
    np.testing.assert_allclose(np.percentile(means, [2.5, 97.5]), interval[0], atol=1 / 40)
