"""Calibrated confidence: one temperature fitted on validation, folded into the model.

A fine-tuned classifier is typically overconfident: its top probability says 0.9 where it
is right 80% of the time. Temperature scaling (Guo et al. 2017, "On Calibration of Modern
Neural Networks") divides the logits by one number T, fitted on the validation split by
minimising the negative log-likelihood. No prediction changes (softmax(z / T) keeps the
order of z); the probabilities come to mean what they say. A multi-label classifier's
sigmoids get a temperature each (one binary problem per label).

T is folded into the classifier's last Dense layer (kernel and bias divided by T), so the
saved model itself gives calibrated probabilities: predict.py, the live lab, the
SavedModel and inspection need nothing new. The numbers:

- `expected_calibration_error` (ECE): the examples in 15 equal-width bins of their top
  probability; the mean over bins, weighted by their share, of |accuracy - confidence|.
  For label sets, every (example, label) probability against whether the text has it.
- `ece_if_calibrated`: the ECE a perfectly calibrated model would show on as many texts
  (binned ECE is biased upward on a finite sample: about 0.02 on 1,300 texts, 0.035 on 500
  at the confidences of a sentiment model), the line under which an ECE means nothing.
- `brier_score`: the mean squared distance of the probabilities from the one-hot (or
  multi-hot) truth, summed over classes (per label for label sets).
- `coverage_curve`: the accuracy of the kept predictions when the model abstains below
  each threshold of its top probability.

The files an evaluation writes of them (the reliability diagram, the coverage curve) are
`engine.calibration.reports`'.
"""

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

BINS = 15
LOG_T_BOUNDS = (np.log(0.05), np.log(20.0))  # the temperatures the fit may choose
PROBABILITY_FLOOR = 1e-12  # before a log: a probability that rounded to 0 stays finite
COVERAGES = (0.9, 0.8)  # evaluate.py reports the accuracy at these
DRAWS = 200  # simulated calibrated samples of `ece_if_calibrated`


def _log(probabilities):
    return np.log(np.clip(np.asarray(probabilities, np.float64), PROBABILITY_FLOOR, 1.0))


def scaled(probabilities, temperature, multi_label=False) -> np.ndarray:
    """The probabilities the logits divided by `temperature` give, from the probabilities
    (softmax: log p differs from the logits by a constant per row, which cancels).

    Example:
    >>> p = scaled(np.array([[0.9, 0.1]]), 2.0)
    >>> round(float(p[0, 0]), 4)  # 3 : 1, the square root of 9 : 1
    0.75
    """
    if multi_label:
        logits = _log(probabilities) - _log(1 - np.asarray(probabilities, np.float64))
        return 1 / (1 + np.exp(-logits / np.asarray(temperature)))
    logits = _log(probabilities) / temperature
    logits -= logits.max(axis=-1, keepdims=True)
    exp = np.exp(logits)
    return exp / exp.sum(axis=-1, keepdims=True)


def _nll(labels, probabilities, multi_label):
    if multi_label:
        labels = np.asarray(labels, np.float64)
        return -(labels * _log(probabilities) + (1 - labels) * _log(1 - probabilities)).mean()
    return -_log(probabilities[np.arange(len(labels)), np.asarray(labels)]).mean()


def fit_temperature(labels, probabilities, multi_label=False):
    """The T (a float; for label sets an array, one per label) that minimises the
    negative log-likelihood of `labels` under `scaled(probabilities, T)`, with a
    standard-normal prior on log T (see `_fit`).

    Example:
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(4000, 3)) * 4
    >>> labels = [rng.choice(3, p=row) for row in scaled(np.exp(logits), 2.0)]
    >>> # The model's logits are twice as sharp as the truth's: T near 2.
    >>> bool(abs(fit_temperature(labels, scaled(np.exp(logits), 1.0)) - 2) < 0.15)
    True
    """
    probabilities = np.asarray(probabilities, np.float64)
    if not multi_label:
        return _fit(labels, probabilities, False)
    labels = np.asarray(labels, np.float64)
    return np.array(
        [
            _fit(labels[:, index], probabilities[:, index], True)
            if 0 < labels[:, index].mean() < 1
            else 1.0  # a label validation always (or never) gives: nothing to fit
            for index in range(labels.shape[1])
        ]
    )


def _fit(labels, probabilities, multi_label) -> float:
    # A standard-normal prior on log T (the fit is its posterior mode): with many examples
    # it weighs nothing, but a validation split the model gets all right has no finite
    # maximum-likelihood T (the likelihood grows as T goes to 0), and the prior stops it
    # from sharpening the probabilities without end.
    count = len(labels)
    result = minimize_scalar(
        lambda log_t: (
            count * _nll(labels, scaled(probabilities, np.exp(log_t), multi_label), multi_label)
            + log_t**2 / 2
        ),
        bounds=LOG_T_BOUNDS,
        method="bounded",
        options={"xatol": 1e-4},
    )
    return float(np.exp(result.x))


def confidences(labels, probabilities, multi_label=False):
    """(confidence, right) per prediction: the top probability and whether its class is
    the label; for label sets every (example, label) probability and whether it is given."""
    probabilities = np.asarray(probabilities, np.float64)
    if multi_label:
        return probabilities.reshape(-1), np.asarray(labels).reshape(-1) > 0.5
    return probabilities.max(axis=-1), probabilities.argmax(axis=-1) == np.asarray(labels)


def bin_index(confidence, bins=BINS) -> np.ndarray:
    """Each confidence's equal-width bin, right-closed (the first also holds 0).

    Example:
    >>> bin_index(np.array([0.0, 0.1, 0.11, 1.0]), bins=10).tolist()
    [0, 0, 1, 9]
    """
    return np.clip(np.ceil(np.asarray(confidence) * bins).astype(int) - 1, 0, bins - 1)


def reliability_bins(confidence, right, bins=BINS) -> pd.DataFrame:
    """Per equal-width bin of `confidence` (`bin_index`): its count, mean confidence and
    accuracy (empty bins left out)."""
    table = pd.DataFrame({"bin": bin_index(confidence, bins), "confidence": confidence,
                          "right": right})  # fmt: skip
    grouped = table.groupby("bin")
    return pd.DataFrame(
        {
            "count": grouped.size(),
            "confidence": grouped["confidence"].mean(),
            "accuracy": grouped["right"].mean(),
        }
    )


def expected_calibration_error(labels, probabilities, multi_label=False, bins=BINS) -> float:
    """ECE over `bins` equal-width bins of the top probability (see the module docstring).

    Example:
    >>> expected_calibration_error([0, 0, 1, 1], np.array([[0.9, 0.1]] * 4))
    0.4
    """
    confidence, right = confidences(labels, probabilities, multi_label)
    index = bin_index(confidence, bins)
    confidence_sums = np.bincount(index, confidence, minlength=bins)
    return round(_binned_gap(index, right, confidence_sums, bins), 6)


def _binned_gap(index, right, confidence_sums, bins=BINS) -> float:
    """ECE from the bins' sums: n_b / n * |accuracy_b - confidence_b| summed over the bins
    is |right_b - confidence sum_b| summed, over n."""
    gaps = np.abs(np.bincount(index, right, minlength=bins) - confidence_sums)
    return float(gaps.sum() / len(index))


def ece_if_calibrated(labels, probabilities, multi_label=False, draws=DRAWS, seed=0):
    """(mean, 95th percentile) of the ECE a perfectly calibrated model with these
    confidences would show on as many texts: each answer drawn right with the probability
    it states. The binned ECE is never 0 on a finite sample; an ECE under the 95th
    percentile is as small as this many texts can tell apart from calibrated.

    Example:
    >>> rng = np.random.default_rng(1)
    >>> p = rng.uniform(0.5, 1, size=(500, 1)); p = np.hstack([p, 1 - p])
    >>> mean, high = ece_if_calibrated([0] * 500, p)
    >>> bool(0.01 < mean < high < 0.07)  # 500 texts: a few points of noise
    True
    """
    confidence, _ = confidences(labels, probabilities, multi_label)
    index = bin_index(confidence)
    confidence_sums = np.bincount(index, confidence, minlength=BINS)  # (bins,)
    rng = np.random.default_rng(seed)
    errors = [
        _binned_gap(index, rng.random(len(confidence)) < confidence, confidence_sums)
        for _ in range(draws)
    ]
    return round(float(np.mean(errors)), 6), round(float(np.percentile(errors, 95)), 6)


def brier_score(labels, probabilities, multi_label=False) -> float:
    """The mean squared error of the probabilities against the truth, summed over the
    classes (a label set's: averaged over the labels).

    Example:
    >>> brier_score([0], np.array([[0.8, 0.2]]))  # 0.2^2 + 0.2^2
    0.08
    """
    probabilities = np.asarray(probabilities, np.float64)
    if multi_label:
        return round(float(((probabilities - np.asarray(labels)) ** 2).mean()), 6)
    truth = np.eye(probabilities.shape[1])[np.asarray(labels)]
    return round(float(((probabilities - truth) ** 2).sum(axis=1).mean()), 6)


def coverage_curve(labels, probabilities) -> pd.DataFrame:
    """threshold, coverage, accuracy: abstaining on the texts whose top probability is under
    each threshold (0.00, 0.01, ..., 0.99), the share kept and their accuracy (empty: NaN)."""
    confidence, right = confidences(labels, probabilities)
    thresholds = np.round(np.arange(0, 1, 0.01), 2)
    kept = confidence[None, :] >= thresholds[:, None]  # (thresholds, N)
    counts = kept.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = (kept & right[None, :]).sum(axis=1) / counts
    return pd.DataFrame(
        {"threshold": thresholds, "coverage": counts / len(right), "accuracy": accuracy}
    )


def accuracy_at_coverage(labels, probabilities, coverage) -> float:
    """The accuracy of the `coverage` share of the texts the model is surest of."""
    confidence, right = confidences(labels, probabilities)
    kept = max(1, int(round(coverage * len(right))))
    order = np.argsort(-confidence, kind="stable")[:kept]
    return round(float(right[order].mean()), 6)


def fold_temperature(head, temperature) -> None:
    """Divides the Dense layer `head`'s kernel and bias by `temperature` (a float, or one
    per output unit): its logits, and so the model's probabilities, come out scaled."""
    divisor = np.asarray(temperature, np.float32)
    head.kernel.assign(np.asarray(head.kernel) / divisor)
    head.bias.assign(np.asarray(head.bias) / divisor)


def calibrate(classifier, predictions, class_names):
    """Fits the temperature on `predictions["validation"]` and folds it into `classifier`'s
    head (`fold_temperature`).

    Args:
        classifier: a `TransformerClassifier` (its `head` and `multi_label`).
        predictions: {split: (probabilities, labels)} of the unscaled classifier.

    Returns:
        (metrics.json's "calibration" block: {"temperature" (a float, or {label: T} for
        label sets), split: {"ece_before", "ece_after"}}, the predictions scaled).
    """
    multi_label = classifier.multi_label
    temperature = fit_temperature(*predictions["validation"][::-1], multi_label=multi_label)
    fold_temperature(classifier.head, temperature)
    report = {
        "temperature": (
            {name: round(float(t), 4) for name, t in zip(class_names, temperature)}
            if multi_label
            else round(temperature, 4)
        )
    }
    calibrated = {}
    for split, (probabilities, labels) in predictions.items():
        after = scaled(probabilities, temperature, multi_label)
        report[split] = {
            "ece_before": expected_calibration_error(labels, probabilities, multi_label),
            "ece_after": expected_calibration_error(labels, after, multi_label),
        }
        calibrated[split] = (after, labels)
    return report, calibrated
