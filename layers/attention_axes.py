"""Attention over any axes of (B, d1, ..., dk, D) inputs, run as attention over sequences.

Private to `MultiHeadAttention`. Keras' `attention_axes` lets a layer attend over some
axes of a higher-rank input (for example the columns of an image, each row on its own).
Rather than a second attention path with generated einsum equations, the inputs are
brought to (B', L, D): the free axes (neither batch, features nor attention axes) join
the batch, and the attention axes are flattened into one sequence of length L, their
product. The three-dimensional path, the masks and the fused kernel then apply
unchanged, and the results are brought back to Keras' layout.

Shapes: B batch, F... the free axes, A... the attention axes (T... for the query, S...
for the key), B' = B * prod(F), L = prod(A), N heads.
"""

import math

from keras import ops


def attention_axes_of(attention_axes, rank):
    """Keras' `attention_axes` for inputs of `rank` as sorted positive axes.

    None means every axis but the batch and the features.

    >>> attention_axes_of(None, 3), attention_axes_of(-2, 4), attention_axes_of((2, 1), 5)
    ((1,), (2,), (2, 1))
    """
    if attention_axes is None:
        return tuple(range(1, rank - 1))
    axes = (attention_axes,) if isinstance(attention_axes, int) else tuple(attention_axes)
    whole = all(isinstance(axis, int) and not isinstance(axis, bool) for axis in axes)
    positive = tuple(axis % rank if whole and -rank <= axis < rank else -1 for axis in axes)
    if (
        not axes
        or len(set(positive)) < len(positive)
        or any(axis < 1 or axis > rank - 2 for axis in positive)
    ):
        raise ValueError(
            "`attention_axes` must name distinct axes between the batch axis and the "
            f"feature axis of inputs of rank {rank}. Received: attention_axes={attention_axes!r}"
        )
    return positive  # in the given order, which Keras keeps in its layouts


class SequenceLayout:
    """How inputs of one rank and `attention_axes` map to sequences (B', L, D) and back."""

    def __init__(self, rank, attention_axes):
        self.rank = rank
        self.axes = attention_axes_of(attention_axes, rank)
        self.free_axes = tuple(axis for axis in range(1, rank - 1) if axis not in self.axes)
        self.trivial = self.axes == (1,) and rank == 3  # (B, T, D): nothing to do
        self.permutation = (0, *self.free_axes, *self.axes)  # then the trailing axes

    def to_sequences(self, inputs):
        """(B, d1, ..., dk, D...) -> (B', L, D...): trailing feature axes are kept."""
        if self.trivial or inputs is None:
            return inputs
        shape = ops.shape(inputs)
        trailing = len(inputs.shape) - (self.rank - 1)  # 1 for inputs, 0 for masks
        moved = ops.transpose(
            inputs, (*self.permutation, *range(self.rank - 1, self.rank - 1 + trailing))
        )
        length = math.prod(shape[axis] for axis in self.axes)
        return ops.reshape(moved, (-1, length, *shape[self.rank - 1 :]))  # (B', L, D...)

    def attention_mask(self, mask, query_shape, key_shape):
        """Keras' high-rank `attention_mask` (B, F..., T..., S...) as (B', T, S). A mask of
        lower rank gets its missing axes where Keras puts them, before the query axes: (B,
        T, S) is one mask per example, shared by the free axes."""
        if self.trivial or mask is None:
            return mask
        num_attention = len(self.axes)
        full_rank = 1 + len(self.free_axes) + 2 * num_attention
        mask = ops.cast(mask, "bool")
        for _ in range(full_rank - len(mask.shape)):
            mask = ops.expand_dims(mask, -2 * num_attention - 1)
        batch_and_free = [query_shape[axis] for axis in (0, *self.free_axes)]
        query_lengths = [query_shape[axis] for axis in self.axes]
        key_lengths = [key_shape[axis] for axis in self.axes]
        mask = ops.broadcast_to(mask, (*batch_and_free, *query_lengths, *key_lengths))
        return ops.reshape(mask, (-1, math.prod(query_lengths), math.prod(key_lengths)))

    def per_example(self, values, query_shape):
        """A per-example (B, ...) tensor, such as a (B, N) head mask, as (B', ...): each row
        repeated for the free axes."""
        if self.trivial or values is None or len(values.shape) < 2:
            return values
        return ops.repeat(values, math.prod(query_shape[axis] for axis in self.free_axes), axis=0)

    def from_sequences(self, outputs, query_shape):
        """(B', L, O...) -> Keras' (B, d1, ..., dk, O...): the inverse of `to_sequences`."""
        if self.trivial:
            return outputs
        moved_shape = [query_shape[axis] for axis in self.permutation]
        trailing = tuple(outputs.shape[2:])
        outputs = ops.reshape(outputs, (*moved_shape, *trailing))  # (B, F..., T..., O...)
        inverse = [self.permutation.index(axis) for axis in range(self.rank - 1)]
        return ops.transpose(outputs, (*inverse, *range(self.rank - 1, len(outputs.shape))))

    def scores_from_sequences(self, scores, query_shape, key_shape):
        """(B', N, T, S) -> Keras' (B, F..., N, T..., S...)."""
        if self.trivial:
            return scores
        batch_and_free = [query_shape[axis] for axis in (0, *self.free_axes)]
        query_lengths = [query_shape[axis] for axis in self.axes]
        key_lengths = [key_shape[axis] for axis in self.axes]
        return ops.reshape(scores, (*batch_and_free, scores.shape[1], *query_lengths, *key_lengths))
