"""Learned positional embedding.

Shapes: B batch, T query (sequence) length, D model size.
"""

import keras
from keras import ops

from layers.argument_checks import check_positive_int


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class PositionEmbedding(keras.layers.Layer):
    """A learned embedding per position, for sequences up to `sequence_length`.

    The layer returns the position embeddings, not the sum; add them to the
    token embeddings.

    Masking: the embedding does not depend on the mask; the layer passes the
    input mask through unchanged.

    Args:
        sequence_length: int > 0. The longest sequence (number of positions).
        initializer: initializer of the `(sequence_length, D)` table.
        **kwargs: base layer arguments.

    Call arguments:
        inputs: tensor (B, T, D) with T <= sequence_length - start_index; only
            its shape is used.
        start_index: int. Position of the first step.

    Returns:
        A tensor with the shape of `inputs`.

    Example:

    >>> import numpy as np
    >>> layer = PositionEmbedding(sequence_length=8)
    >>> tuple(layer(np.zeros((2, 5, 3), "float32")).shape)
    (2, 5, 3)
    """

    def __init__(self, sequence_length, initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        check_positive_int("sequence_length", sequence_length)
        self.sequence_length = sequence_length
        self.initializer = keras.initializers.get(initializer)
        self.supports_masking = True

    def build(self, input_shape):
        self.position_embeddings = self.add_weight(
            name="embeddings",
            shape=(self.sequence_length, input_shape[-1]),
            initializer=self.initializer,
        )

    def call(self, inputs, start_index=0):
        shape = ops.shape(inputs)
        length = shape[-2]
        if isinstance(length, int) and isinstance(start_index, int):
            if start_index + length > self.sequence_length:
                raise ValueError(
                    f"Inputs of length {length} from start_index={start_index} exceed "
                    f"sequence_length={self.sequence_length}; raise `sequence_length`."
                )
        table = ops.convert_to_tensor(self.position_embeddings)
        positions = ops.slice(table, (start_index, 0), (length, shape[-1]))  # (T, D)
        return ops.broadcast_to(positions, shape)

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "initializer": keras.initializers.serialize(self.initializer),
            }
        )
        return config
