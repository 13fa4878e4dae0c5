"""How faithful an attribution is: what happens to the prediction when its top tokens go.

ERASER's measures (DeYoung et al., ACL 2020), per example and class c (the predicted one),
for bins of k = 1, 5, 10, 20 and 50% of the text's tokens (at least one token):
- comprehensiveness: p_c(text) - p_c(text without its top k tokens): high is faithful;
- sufficiency: p_c(text) - p_c(only its top k tokens): low is faithful;
and AOPC, their mean over the bins. A token is removed by giving it the padding id, which
the classifier masks out of attention and pooling (the other tokens keep their positions);
WordPiece's [CLS] and [SEP] are never removed. Ties in a ranking are broken at random.
`random` is averaged over 10 orderings per example. The entropy of each score vector
(of the absolute scores, normalised by log of the number of tokens: 1 is flat) says how
peaked it is. A paired bootstrap over the examples (`bootstrap.paired_bootstrap`) gives
every mean and every difference against random and against rollout a 95% interval.

Letter legend: E examples, T token ids, K bins, M methods.
"""

import time

import numpy as np

from inspection.methods.attribution import METHODS, attribute
from inspection.methods.bootstrap import paired_bootstrap
from inspection.methods.forward_passes import class_probabilities, probabilities

BINS_PERCENT = (1, 5, 10, 20, 50)
RANDOM_ORDERINGS = 10
# What the best method is compared with: the floor and today's attention explanation.
REFERENCES = ("random", "rollout")


def removal_curves(
    classifier, token_ids, text_mask, scores, classes, full_probability, seed=0, batch_size=32
):
    """Comprehensiveness and sufficiency per example and bin, float64 (E, K) each.

    Args:
        classifier: the run's classifier (token ids -> probabilities).
        token_ids: int (E, T). text_mask: bool (E, T), the tokens that may be removed.
        scores: float (E, T), one method's scores. classes: int (E,).
        full_probability: float (E,), p_c of the whole text.
    """
    rng = np.random.default_rng(seed)
    removed, kept = [], []
    for ids, mask, row_scores in zip(token_ids, text_mask, scores, strict=True):
        positions = np.flatnonzero(mask)  # (n,)
        # Highest score first; a random secondary key breaks ties.
        order = positions[np.lexsort((rng.random(len(positions)), -row_scores[positions]))]
        for count in bin_sizes(len(positions)):
            without = ids.copy()
            without[order[:count]] = 0
            only = ids.copy()
            only[order[count:]] = 0
            removed.append(without)
            kept.append(only)
    rows = np.repeat(classes, len(BINS_PERCENT))
    shape = (len(token_ids), len(BINS_PERCENT))
    without_top = class_probabilities(classifier, np.array(removed), rows, batch_size)
    only_top = class_probabilities(classifier, np.array(kept), rows, batch_size)
    full = np.asarray(full_probability, dtype=np.float64)[:, None]
    return full - without_top.reshape(shape), full - only_top.reshape(shape)


def bin_sizes(num_tokens):
    """How many tokens each bin removes or keeps: k% of them, at least one.

    Example:
    >>> bin_sizes(30)
    [1, 2, 3, 6, 15]
    """
    return [max(1, int(round(num_tokens * percent / 100))) for percent in BINS_PERCENT]


def normalized_entropy(scores, text_mask):
    """Per example, the entropy of |scores| over its text tokens divided by log(n), (E,).

    Example:
    >>> normalized_entropy(np.array([[1.0, 1.0, 0.0]]), np.array([[True, True, False]]))
    array([1.])
    """
    entropies = []
    for row_scores, mask in zip(scores, text_mask, strict=True):
        weights = np.abs(row_scores[mask])
        if len(weights) < 2 or weights.sum() == 0:
            entropies.append(1.0)  # Nothing to tell apart, or all zero: flat.
            continue
        shares = weights / weights.sum()
        shares = shares[shares > 0]
        entropies.append(float(-(shares * np.log(shares)).sum() / np.log(len(weights))))
    return np.array(entropies)


def measure_faithfulness(
    classifier, token_ids, text_mask, pooling, methods=METHODS, seed=0, batch_size=32
):
    """Scores every example with every method and measures each method's faithfulness.

    Args:
        classifier: the run's classifier. token_ids: int (E, T), padding at the end.
        text_mask: bool (E, T) (`word_pieces.text_token_mask`); an example without a text
            token cannot be measured: leave it out before.
        pooling: the classifier's pooling. methods: names from `attribution.METHODS`.

    Returns:
        A JSON-ready dict: "examples", "bins_percent", "best_method" (highest
        AOPC-comprehensiveness but random), and per method "comprehensiveness" and
        "sufficiency" (AOPC mean and 95% interval), their curves per bin, "entropy",
        "seconds_per_example", and the paired differences "vs_random" / "vs_rollout".
    """
    token_ids, text_mask = np.asarray(token_ids), np.asarray(text_mask, dtype=bool)
    if not text_mask.any(axis=1).all():
        raise ValueError("every example needs at least one text token to be removed")
    # One pass gives both the predicted classes and their probabilities.
    predicted = probabilities(classifier, token_ids, batch_size)  # (E, C)
    classes = predicted.argmax(axis=-1)
    full = predicted[np.arange(len(predicted)), classes]  # (E,)
    comprehensiveness, sufficiency, details = {}, {}, {}
    for method in methods:
        comp_curve, suff_curve, entropy, seconds = _method_curves(
            classifier, token_ids, text_mask, method, pooling, classes, full, seed, batch_size
        )
        comprehensiveness[method] = comp_curve.mean(axis=1)  # (E,) AOPC
        sufficiency[method] = suff_curve.mean(axis=1)
        details[method] = {
            "comprehensiveness_curve": comp_curve.mean(axis=0).tolist(),
            "sufficiency_curve": suff_curve.mean(axis=0).tolist(),
            "entropy": float(entropy.mean()),
            "seconds_per_example": seconds,
        }
    comp_summary, comp_difference = paired_bootstrap(comprehensiveness, seed=seed)
    suff_summary, suff_difference = paired_bootstrap(sufficiency, seed=seed)
    for method, entry in details.items():
        entry["comprehensiveness"] = comp_summary[method]
        entry["sufficiency"] = suff_summary[method]
        for reference in REFERENCES:
            if reference in details and reference != method:
                entry[f"vs_{reference}"] = {
                    "comprehensiveness": comp_difference(method, reference),
                    "sufficiency": suff_difference(method, reference),
                }
    ranked = [method for method in methods if method != "random"]
    best = max(ranked, key=lambda method: comp_summary[method]["mean"]) if ranked else None
    return {
        "examples": len(token_ids),
        "bins_percent": list(BINS_PERCENT),
        "best_method": best,
        "methods": {method: details[method] for method in methods},
    }


def _method_curves(
    classifier, token_ids, text_mask, method, pooling, classes, full, seed, batch_size
):
    """One method's comprehensiveness and sufficiency curves, float64 (E, K) each (`random`:
    the mean over `RANDOM_ORDERINGS` orderings), the entropy of its first scores (E,) and
    the seconds its first scoring took per example."""
    start = time.perf_counter()
    orderings = RANDOM_ORDERINGS if method == "random" else 1
    curves = []
    for ordering in range(orderings):
        scores = attribute(
            classifier,
            token_ids,
            method,
            pooling,
            classes,
            seed=seed + ordering,
            batch_size=batch_size,
        )
        if ordering == 0:
            seconds = (time.perf_counter() - start) / len(token_ids)
            entropy = normalized_entropy(scores, text_mask)
        curves.append(
            removal_curves(
                classifier, token_ids, text_mask, scores, classes, full, seed + ordering, batch_size
            )
        )
    comp_curve = np.mean([comp for comp, _ in curves], axis=0)  # (E, K)
    suff_curve = np.mean([suff for _, suff in curves], axis=0)  # (E, K)
    return comp_curve, suff_curve, entropy, seconds
