"""TrimPadding: cuts a batch of token ids to its longest row, in the saved end-to-end model."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class TrimPadding(keras.layers.Layer):
    """Drops the trailing columns that are padding in every row: `(B, T)` -> `(B, T')`.

    `TextVectorization(output_sequence_length=cap)` pads every text to the cap; this layer
    cuts the batch back to its longest text, so the classifier behind it computes no more
    than the batch needs (texts are padded at the end only). At least one column is kept.
    The end-to-end model takes strings, so it runs on TensorFlow; so does this layer,
    whose output length depends on the values of its input.

    Args:
        padding_id: the id of padding.
        **kwargs: base layer arguments.

    Example:
    >>> import numpy as np
    >>> TrimPadding()(np.array([[5, 6, 0, 0], [7, 0, 0, 0]])).numpy().tolist()
    [[5, 6], [7, 0]]
    """

    def __init__(self, padding_id=0, **kwargs):
        super().__init__(**kwargs)
        self.padding_id = padding_id

    def call(self, token_ids):
        is_real = ops.not_equal(token_ids, self.padding_id)  # (B, T)
        positions = ops.arange(1, ops.shape(token_ids)[1] + 1)  # (T,)
        ends = ops.max(ops.where(is_real, positions[None, :], 0), axis=1)  # (B,)
        longest = ops.maximum(ops.max(ends), 1)
        return token_ids[:, :longest]  # (B, T')

    def compute_output_spec(self, token_ids):
        return keras.KerasTensor((token_ids.shape[0], None), dtype=token_ids.dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"padding_id": self.padding_id})
        return config
