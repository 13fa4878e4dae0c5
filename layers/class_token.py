"""ClassToken: prepends a learned [CLS]-style vector to a sequence of embeddings.

Shapes: B batch, T query (sequence) length, D model size.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class ClassToken(keras.layers.Layer):
    """Prepends one learned vector to every sequence: `(B, T, D)` -> `(B, T + 1, D)`.

    The blocks attend from and to it like any token; `SequencePooling("cls")` then reads
    its final state at position 0. It is added after the position encoding, so it carries
    no position: it always sits at position 0, and its learned value absorbs that.

    Masking: the incoming Keras mask `(B, T)` (True = real token) is extended with True
    at position 0, so the class token is always attended to and padding stays masked.

    Args:
        initializer: initializer of the token vector.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Example:

    >>> import numpy as np
    >>> tuple(ClassToken()(np.zeros((2, 5, 8), "float32")).shape)
    (2, 6, 8)
    """

    def __init__(self, initializer="random_normal", **kwargs):
        super().__init__(**kwargs)
        self.initializer = keras.initializers.get(initializer)
        self.supports_masking = True

    def build(self, input_shape):
        self.class_token = self.add_weight(
            name="class_token",
            shape=(1, 1, input_shape[-1]),
            initializer=self.initializer,
        )

    def call(self, inputs, mask=None):
        batch_size = ops.shape(inputs)[0]
        token = ops.cast(self.class_token, inputs.dtype)
        token = ops.broadcast_to(token, (batch_size, 1, ops.shape(inputs)[-1]))  # (B, 1, D)
        return ops.concatenate([token, inputs], axis=1)  # (B, T + 1, D)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        first = ops.ones_like(mask[:, :1], dtype="bool")  # (B, 1)
        return ops.concatenate([first, ops.cast(mask, "bool")], axis=1)  # (B, T + 1)

    def compute_output_shape(self, input_shape):
        length = None if input_shape[1] is None else input_shape[1] + 1
        return (input_shape[0], length, input_shape[2])

    def get_config(self):
        config = super().get_config()
        config.update({"initializer": keras.initializers.serialize(self.initializer)})
        return config
