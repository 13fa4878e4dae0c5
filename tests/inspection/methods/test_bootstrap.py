"""The bootstrap intervals (inspection/methods/bootstrap.py): the paired resampling and
one series' interval, against direct computations."""

import numpy as np
import pytest

from inspection.methods.bootstrap import mean_interval, paired_bootstrap


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
