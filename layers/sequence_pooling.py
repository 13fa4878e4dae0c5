"""SequencePooling: one vector per sequence from the real (unmasked) tokens only.

Shapes: B batch, T query (sequence) length, D model size.
"""

import keras
from keras import ops

from layers.argument_checks import check_one_of


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class SequencePooling(keras.layers.Layer):
    """Pools a sequence of vectors `(B, T, D)` into `(B, D)`, ignoring padding.

    Masking: the Keras mask (True = real token) excludes padded positions from the mean
    and the max; an all-padding row pools to zeros, never NaN. Without a mask every
    position counts. "cls" takes position 0, where `ClassToken` puts the learned token.

    Args:
        pooling: "mean", "max" or "cls".
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: `(B, T, D)` float tensor.
        mask: optional `(B, T)` boolean tensor, True for real tokens.

    Returns:
        `(B, D)` tensor.

    Example:

    >>> import numpy as np
    >>> x = np.array([[[1.0], [3.0], [100.0]]], "float32")
    >>> mask = np.array([[True, True, False]])
    >>> float(SequencePooling("mean")(x, mask=mask)[0, 0])
    2.0
    >>> float(SequencePooling("max")(x, mask=mask)[0, 0])
    3.0
    """

    # The layer checks its own argument: layers never see the config (config.POOLINGS,
    # which names the same three for configs and the inspection tools).
    POOLINGS = ("mean", "max", "cls")

    def __init__(self, pooling="mean", **kwargs):
        super().__init__(**kwargs)
        check_one_of("pooling", pooling, self.POOLINGS)
        self.pooling = pooling
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if self.pooling == "cls":
            return inputs[:, 0, :]
        if mask is None:
            if self.pooling == "mean":
                return ops.mean(inputs, axis=1)
            return ops.max(inputs, axis=1)
        # Pool in float32: a float16 sum over hundreds of tokens loses precision.
        x = ops.cast(inputs, "float32")
        real = ops.expand_dims(ops.cast(mask, "bool"), axis=-1)  # (B, T, 1)
        if self.pooling == "mean":
            weights = ops.cast(real, "float32")
            count = ops.maximum(ops.sum(weights, axis=1), 1.0)  # (B, 1)
            pooled = ops.sum(x * weights, axis=1) / count
        else:
            lowest = ops.full_like(x, -3.0e38)
            pooled = ops.max(ops.where(real, x, lowest), axis=1)
            has_tokens = ops.any(real, axis=1)  # (B, 1)
            pooled = ops.where(has_tokens, pooled, ops.zeros_like(pooled))
        return ops.cast(pooled, self.compute_dtype)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[2])

    def get_config(self):
        config = super().get_config()
        config.update({"pooling": self.pooling})
        return config
