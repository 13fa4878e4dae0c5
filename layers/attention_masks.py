"""Boolean attention masks (True = attend) in the layout the attention layers use.

Private helpers of `ScaledDotProductAttention` and `MultiHeadAttention`: every mask is
brought to a broadcastable (B|1, N|1, T|1, S) and combined with logical AND. The masks that
act on the attention's outputs instead (padded queries, the float head mask) are
`masked_outputs`'.

Shapes: B batch, T query length, S key length, N heads, Hv value head size.
"""

from keras import ops


def attention_mask_4d(mask, num_heads, query_length, key_length, name="attention_mask"):
    """A boolean attention mask of any accepted shape as (B|1, N|1, T, S).

    Accepted: (B, T, S), (T, S) and, when `num_heads` is given (multi-head attention),
    (B, N, T, S) and (B, 1, T, S). Sizes that are known are checked against
    `num_heads`, `query_length` and `key_length` (None: unknown, not checked).
    """
    accepted = (
        "(B, T, S) or (T, S)"
        if num_heads is None
        else ("(B, T, S), (T, S), (B, N, T, S) or (B, 1, T, S)")
    )
    shape = tuple(mask.shape)
    rank = len(shape)
    known_heads = (1, num_heads) if num_heads is not None else (1,)
    fits = rank in (2, 3) or (rank == 4 and num_heads is not None)
    if fits and rank == 4:
        fits = shape[1] is None or shape[1] in known_heads
    if fits:
        for size, expected in ((shape[-2], query_length), (shape[-1], key_length)):
            fits = fits and (size is None or expected is None or size in (1, expected))
    if not fits:
        raise ValueError(
            f"`{name}` must have shape {accepted} (B batch, N={num_heads} heads, "
            f"T={query_length} queries, S={key_length} keys). Received: {name}.shape={shape}"
        )
    mask = ops.cast(mask, "bool")
    if rank == 2:
        return mask[None, None, :, :]  # (1, 1, T, S)
    if rank == 3:
        return mask[:, None, :, :]  # (B, 1, T, S)
    return mask


def key_padding_mask(mask):
    """A (B, S) key padding mask as (B, 1, 1, S)."""
    return ops.cast(mask, "bool")[:, None, None, :]


def causal_mask(query_length, key_length):
    """(1, 1, T, S): query i attends keys 0..i."""
    return ops.tril(ops.ones((query_length, key_length), "bool"))[None, None, :, :]


def sliding_window_mask(query_length, key_length, window):
    """(1, 1, T, S): query i attends keys j with |i - j| < window (Keras' band)."""
    query_positions = ops.arange(query_length)[:, None]  # (T, 1)
    key_positions = ops.arange(key_length)[None, :]  # (1, S)
    return (ops.abs(query_positions - key_positions) < window)[None, None, :, :]


def key_side_mask(
    query, key, num_heads, value_mask=None, key_mask=None, attention_mask=None, sliding_window=None
):
    """What `MultiHeadAttention` hands to the softmax: the AND of its key padding masks
    (B, S), its `attention_mask` and its sliding-window band, as boolean
    (B|1, N|1, 1|T, S), or None. `query` (B, T, D) and `key` (B, S, Dk) give the lengths.
    """
    masks = []
    if value_mask is not None:
        masks.append(key_padding_mask(value_mask))  # (B, 1, 1, S)
    if key_mask is not None and key_mask is not value_mask:
        masks.append(key_padding_mask(key_mask))  # (B, 1, 1, S)
    if attention_mask is not None:
        masks.append(attention_mask_4d(attention_mask, num_heads, query.shape[1], key.shape[1]))
    if sliding_window is not None:
        masks.append(sliding_window_mask(ops.shape(query)[1], ops.shape(key)[1], sliding_window))
    return all_of(masks)


def masked_outputs(attended, scores, query_mask=None, head_mask=None):
    """The per-head outputs (B, T, N, Hv) and weights (B, N, T, S) or None, padded queries
    zeroed (`query_mask` (B, T), True = real) and each head's output multiplied by its
    `head_mask` entry: (N,) for every example, or (B, N), one mask per example.

    Padded queries are zeroed here rather than masked in the softmax, which is cheaper
    than a full (B, 1, T, S) mask.
    """
    if query_mask is not None:
        query_mask = ops.cast(query_mask, "bool")
        attended = attended * ops.cast(query_mask[:, :, None, None], attended.dtype)
        if scores is not None:
            scores = scores * ops.cast(query_mask[:, None, :, None], scores.dtype)
    if head_mask is not None:
        head_mask = ops.cast(head_mask, attended.dtype)
        if len(head_mask.shape) == 1:
            head_mask = ops.reshape(head_mask, (1, 1, -1, 1))  # (N,) -> (1, 1, N, 1)
        else:
            head_mask = head_mask[:, None, :, None]  # (B, N) -> (B, 1, N, 1)
        attended = attended * head_mask  # (B, T, N, Hv)
    return attended, scores


def all_of(masks):
    """The logical AND of broadcastable boolean masks, or None for none."""
    if not masks:
        return None
    combined = masks[0]
    for mask in masks[1:]:
        combined = ops.logical_and(combined, mask)
    return combined
