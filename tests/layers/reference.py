"""Float64 NumPy reference implementations the layers are tested against."""

import numpy as np


def softmax(logits, axis=-1):
    shifted = logits - logits.max(axis=axis, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / exponentials.sum(axis=axis, keepdims=True)


def attention(query, key, value, mask=None):
    """Single-head attention on (B, T, H), (B, S, H), (B, S, Hv); mask (B, T, S), True = attend.

    Returns (output (B, T, Hv), weights (B, T, S)); fully masked rows give zeros.
    """
    query, key, value = (np.asarray(x, np.float64) for x in (query, key, value))
    logits = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1])  # (B, T, S)
    if mask is None:
        weights = softmax(logits)
    else:
        mask = np.broadcast_to(mask, logits.shape)
        logits = np.where(mask, logits, -np.inf)
        has_key = mask.any(-1, keepdims=True)
        weights = softmax(np.where(has_key, logits, 0.0)) * has_key
        weights = np.where(mask, weights, 0.0)
    return weights @ value, weights


def multi_head_attention(query, value, weights, mask=None):
    """Multi-head attention with kernels shaped like keras.layers.MultiHeadAttention's.

    weights: [Wq (D, N, H), bq (N, H), Wk, bk, Wv (D, N, Hv), bv, Wo (N, Hv, Do), bo (Do,)].
    mask: (B, T, S), True = attend. Returns (output (B, T, Do), weights (B, N, T, S)).
    """
    wq, bq, wk, bk, wv, bv, wo, bo = (np.asarray(w, np.float64) for w in weights)
    query, value = np.asarray(query, np.float64), np.asarray(value, np.float64)
    q = np.einsum("btd,dnh->bnth", query, wq) + bq[None, :, None, :]
    k = np.einsum("bsd,dnh->bnsh", value, wk) + bk[None, :, None, :]
    v = np.einsum("bsd,dnh->bnsh", value, wv) + bv[None, :, None, :]
    heads = q.shape[1]
    outputs, scores = [], []
    for head in range(heads):
        head_output, head_scores = attention(q[:, head], k[:, head], v[:, head], mask)
        outputs.append(head_output)
        scores.append(head_scores)
    attended = np.stack(outputs, axis=2)  # (B, T, N, Hv)
    return np.einsum("btnh,nhd->btd", attended, wo) + bo, np.stack(scores, axis=1)


def layer_norm(x, gamma, beta, epsilon):
    mean = x.mean(-1, keepdims=True)
    variance = x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * gamma + beta
