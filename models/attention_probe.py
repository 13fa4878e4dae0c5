"""AttentionProbe: calls a shared encoder block on its scores path, for the attention model.

Shapes: B batch, T query (sequence) length, N heads, D model size.
"""

import keras


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class AttentionProbe(keras.layers.Layer):
    """Wraps a `TransformerEncoderBlock` and always calls it with `return_attention_scores=True`.

    Why a wrapper: a functional model checks each layer call against the number of
    outputs of that layer's *first* call. The classifier calls its blocks on the fast path
    (one output), so the attention model cannot call the same block objects for two
    outputs. Calling them from inside this layer's `call` adds no node to the block, and
    the block stays a tracked sublayer, so both models share the very same variables.

    Masking: the incoming Keras mask (B, T), True = real token, is passed to the block as
    its `mask`; the output states keep it, the scores carry none.

    Args:
        block: a built or unbuilt `TransformerEncoderBlock` (shared, not copied).
        **kwargs: base layer arguments (`name`, ...).

    Call arguments:
        inputs: tensor (B, T, D).
        mask: optional boolean (B, T), True = real token.
        training: bool. Whether dropout is active.

    Returns:
        `(outputs, attention_scores)`: the block's outputs (B, T, D) and its float32
        attention weights (B, N, T, T).

    Example:

    >>> import numpy as np
    >>> from layers import TransformerEncoderBlock
    >>> block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    >>> outputs, scores = AttentionProbe(block)(np.ones((1, 3, 8), "float32"))
    >>> tuple(scores.shape)
    (1, 2, 3, 3)
    """

    def __init__(self, block, **kwargs):
        super().__init__(**kwargs)
        self.block = block
        self.supports_masking = True

    def build(self, input_shape):
        if not self.block.built:
            self.block.build(input_shape)

    def call(self, inputs, mask=None, training=None):
        return self.block(inputs, mask=mask, training=training, return_attention_scores=True)

    def compute_mask(self, inputs, previous_mask=None):
        # Applied to the first output only (the states); the scores are not a sequence.
        return previous_mask

    # No `compute_output_shape`: the default `compute_output_spec` then traces `call`, which
    # also gives the scores their float32 dtype under mixed precision.

    def get_config(self):
        config = super().get_config()
        config.update({"block": keras.saving.serialize_keras_object(self.block)})
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["block"] = keras.saving.deserialize_keras_object(config["block"])
        return cls(**config)
