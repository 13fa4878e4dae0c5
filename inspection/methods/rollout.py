"""Attention rollout (Abnar & Zuidema, 2020): how much each input token feeds the output.

Letter legend for shape comments: L layers, N heads, T real tokens (padding removed).
"""

import numpy as np

from config import POOLINGS

# The residual connection carries the input past each attention block unchanged; rollout models
# it as an identity matrix mixed in with equal weight, as in the paper.
RESIDUAL_WEIGHT = 0.5


def attention_rollout(attention_scores, padding_mask=None):
    """Rolls attention out through the layers.

    Per layer: average the heads (of a pruned model, the real ones: `head_average`), mix
    in the residual identity (`0.5 * A + 0.5 * I`), renormalise each row to sum to 1, then
    multiply the layers together, first layer rightmost: `R = Â_L @ ... @ Â_2 @ Â_1`.
    Entry `R[i, j]` is how much token `j` of the input flows into position `i`
    of the last layer's output.

    Args:
        attention_scores: float array (L, N, T, T), post-softmax, queries on
            axis 2, keys on axis 3.
        padding_mask: optional bool array (T,), True = real token. Padded
            positions are dropped before rolling out, so the result covers real
            tokens only. Without it every position counts as real.

    Returns:
        float64 array (T', T'), T' the number of real tokens; each row sums to 1.

    Example:
    >>> scores = np.full((1, 1, 2, 2), 0.5)
    >>> attention_rollout(scores).tolist()
    [[0.75, 0.25], [0.25, 0.75]]
    """
    scores = np.asarray(attention_scores, dtype=np.float64)
    if scores.ndim != 4 or scores.shape[2] != scores.shape[3]:
        raise ValueError(
            "attention_scores must have shape (num_layers, num_heads, T, T). "
            f"Received: shape={scores.shape}"
        )
    if padding_mask is not None:
        padding_mask = np.asarray(padding_mask, dtype=bool)
        if padding_mask.shape != (scores.shape[2],):
            raise ValueError(
                f"padding_mask must have shape ({scores.shape[2]},) to match attention_scores. "
                f"Received: shape={padding_mask.shape}"
            )
        scores = scores[:, :, padding_mask][:, :, :, padding_mask]  # (L, N, T', T')
    num_tokens = scores.shape[2]
    identity = np.eye(num_tokens)
    rollout = identity
    for averaged in head_average(scores):  # (T, T)
        mixed = RESIDUAL_WEIGHT * averaged + (1.0 - RESIDUAL_WEIGHT) * identity
        mixed = mixed / mixed.sum(axis=-1, keepdims=True)
        rollout = mixed @ rollout
    return rollout


def head_average(attention_scores):
    """Each layer's mean over its heads, float64 (L, T, T); a pruned model's removed heads
    are left out.

    An export stores a removed head as maps of 0 (`attention_tokens.stack_block_scores`)
    while every real head's rows sum to 1, so the heads averaged are those with any weight.

    Example:
    >>> real = np.full((2, 2), 0.5)
    >>> head_average(np.stack([[real, np.zeros((2, 2)), 3 * real]]))[0].tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    scores = np.asarray(attention_scores, dtype=np.float64)  # (L, N, T, T)
    present = scores.any(axis=(2, 3))  # (L, N)
    total = np.einsum("lnqk,ln->lqk", scores, present)  # (L, T, T)
    return total / np.maximum(present.sum(axis=1), 1)[:, np.newaxis, np.newaxis]


def check_pooling(pooling):
    """A ValueError unless `pooling` is one of the classifier's poolings (config.POOLINGS)."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}. Received: pooling={pooling!r}")


def token_importance(attention_scores, pooling="mean"):
    """Rollout importance per token for a classifier with the given pooling, summing to 1.

    "cls" reads the class token's row (position 0); "mean" and "max" average the
    rows of all real queries (for "max" this is an approximation: the pooled
    features come from different positions, weighted unknowably by the max).

    Example:
    >>> token_importance(np.full((1, 1, 2, 2), 0.5), pooling="cls").tolist()
    [0.75, 0.25]
    """
    check_pooling(pooling)
    query_index = 0 if pooling == "cls" else None
    return rollout_importance(attention_rollout(attention_scores), query_index=query_index)


def rollout_importance(rollout, query_index=None):
    """Turns a rollout matrix into one importance per input token, summing to 1.

    The classifier in this project mean-pools the last layer over real tokens,
    so the default averages the rows of the rollout (every real query counts
    equally, as in the pooling). A classifier that reads one position, such as
    a `[CLS]` token, should pass that position as `query_index` instead.

    Args:
        rollout: array (T, T) from `attention_rollout`, rows summing to 1.
        query_index: optional int, read only this row instead of the mean.

    Returns:
        float64 array (T,) summing to 1 (empty when T is 0).

    Example:
    >>> rollout_importance(np.array([[0.75, 0.25], [0.25, 0.75]])).tolist()
    [0.5, 0.5]
    """
    rollout = np.asarray(rollout, dtype=np.float64)
    if rollout.shape[0] == 0:
        return np.zeros((0,), dtype=np.float64)
    if query_index is not None:
        return rollout[query_index].copy()
    return rollout.mean(axis=0)
