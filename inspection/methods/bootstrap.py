"""Bootstrap intervals: the one owner of how the measures put a 95% interval on a mean.

- `paired_bootstrap`: several series over the same examples, one resampling for all, so
  that the difference of two series gets its own interval (faithfulness, compare);
- `mean_interval`: one series' mean and interval (the word reliance report).

(A slice's accuracy has an exact interval of its own: `methods.slices`.)

Letter legend: E examples, R resamples.
"""

import numpy as np

BOOTSTRAP_RESAMPLES = 1000


def paired_bootstrap(per_example, resamples=BOOTSTRAP_RESAMPLES, seed=0):
    """Means and 95% percentile intervals over the same resampled examples for every series.

    Args:
        per_example: dict name -> float array (E,).

    Returns:
        dict name -> {"mean", "ci95": [low, high]}; and a function of two names giving the
        same for their difference (paired: one resampling for all).

    Example:
    >>> summary, difference = paired_bootstrap({"a": np.ones(4), "b": np.zeros(4)})
    >>> summary["a"]["ci95"], difference("a", "b")["mean"]
    ([1.0, 1.0], 1.0)
    """
    sizes = {len(values) for values in per_example.values()}
    if len(sizes) != 1:
        raise ValueError(f"every series needs the same examples. Received lengths {sizes}")
    size = sizes.pop()
    samples = np.random.default_rng(seed).integers(0, size, (resamples, size))  # (R, E)

    def interval(values):
        means = values[samples].mean(axis=1) if size else np.zeros(1)
        return {
            "mean": float(values.mean()) if size else 0.0,
            "ci95": [float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))],
        }

    summary = {name: interval(np.asarray(values, float)) for name, values in per_example.items()}
    return summary, lambda a, b: interval(
        np.asarray(per_example[a], float) - np.asarray(per_example[b], float)
    )


def mean_interval(values, seed=0):
    """The mean and 95% bootstrap interval of `values`: (mean, [low, high]).

    Example:
    >>> mean_interval([1.0, 1.0, 1.0])
    (1.0, [1.0, 1.0])
    """
    summary, _ = paired_bootstrap({"values": np.asarray(values, dtype=np.float64)}, seed=seed)
    return summary["values"]["mean"], summary["values"]["ci95"]
