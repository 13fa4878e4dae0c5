"""Blockwise (local) self-attention: the sequence cut into blocks that attend within.

Private helpers of `TransformerEncoderBlock(attention_block_size=C)`. Attention over T
tokens costs T x T scores per head; cut into blocks of C tokens it costs T x C, the same
result as full attention with a block-diagonal attention mask. On long texts (512
tokens, blocks of 128) the scores are a quarter of the size, and they are most of the
memory traffic of a small model's train step.

Shapes: B batch, T sequence length, K = ceil(T / C) blocks of C tokens, N heads, D model
size.
"""

from keras import ops


def split_into_blocks(inputs, padding_mask, block_size):
    """(B, T, D) and a boolean (B, T) mask or None -> (B * K, C, D) and (B * K, C).

    The last block is filled up with masked zeros; with no mask, every real token is
    kept (the filler is still masked). A sequence of T <= C tokens is one block of T.
    """
    batch, length, depth = ops.shape(inputs)[0], ops.shape(inputs)[1], inputs.shape[-1]
    block_size = _block_length(length, block_size)
    # Not (-length) % block_size: JAX's symbolic shapes cannot take a negated length.
    filler = (length + block_size - 1) // block_size * block_size - length
    if padding_mask is None:
        padding_mask = ops.ones((batch, length), "bool")
    padding_mask = ops.cast(padding_mask, "bool")
    inputs = ops.concatenate([inputs, ops.zeros((batch, filler, depth), inputs.dtype)], axis=1)
    padding_mask = ops.concatenate([padding_mask, ops.zeros((batch, filler), "bool")], axis=1)
    blocks = ops.reshape(inputs, (-1, block_size, depth))  # (B * K, C, D)
    return blocks, ops.reshape(padding_mask, (-1, block_size))  # (B * K, C)


def _block_length(length, block_size):
    """min(length, block_size): a text no longer than a block is one block, no filler.

    The blocks still start at multiples of `block_size`, whatever the length, so a
    token's block never depends on how long the rest of its batch is."""
    if isinstance(length, int):
        return min(length, block_size)
    if ops.is_tensor(length):  # TensorFlow graphs: the length is a scalar tensor
        return ops.minimum(length, block_size)
    return block_size  # JAX's symbolic lengths, only while inferring output shapes


def merge_blocks(blocks, batch, length):
    """(B * K, C, D) -> (B, T, D): the blocks side by side again, the filler cut off."""
    merged = ops.reshape(blocks, (batch, -1, blocks.shape[-1]))  # (B, K * C, D)
    return merged[:, :length, :]


def block_diagonal_scores(scores, batch, length):
    """Per-block attention weights (B * K, N, C, C) -> (B, N, T, T), zero across blocks.

    What full attention with the block-diagonal mask would return, for the attention
    export and rollout (which read (B, N, T, T) maps).
    """
    num_heads, block_size = scores.shape[1], ops.shape(scores)[-1]
    scores = ops.reshape(scores, (batch, -1, num_heads, block_size, block_size))  # (B, K, N, C, C)
    num_blocks = ops.shape(scores)[1]
    same_block = ops.eye(num_blocks, dtype=scores.dtype)  # (K, K)
    full = ops.einsum("bknpq,kl->bnkplq", scores, same_block)  # (B, N, K, C, K, C)
    side = num_blocks * block_size
    full = ops.reshape(full, (batch, num_heads, side, side))  # (B, N, K * C, K * C)
    return full[:, :, :length, :length]
