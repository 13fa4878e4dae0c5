"""Position-wise feed-forward network.

Shapes: B batch, T query (sequence) length, D model size (the input's last
dimension).
"""

import keras

from layers.argument_checks import check_positive_int, check_rate
from layers.initializers import sublayer_initializer


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class FeedForward(keras.layers.Layer):
    """Position-wise feed-forward: Dense(intermediate_dim, activation) -> dropout -> Dense.

    Masking: every position is transformed on its own, so the input mask is
    passed through unchanged.

    Args:
        intermediate_dim: int > 0. Width of the hidden layer.
        output_dim: int or None. Output width; defaults to the input width.
        activation: activation of the hidden layer.
        dropout: float in [0, 1). Dropout after the hidden layer.
        kernel_initializer, bias_initializer: initializers of both layers. Each
            layer gets its own copy, with its own seed when seeded
            (`layers.initializers.sublayer_initializer`).
        **kwargs: base layer arguments.

    Call arguments:
        inputs: tensor (B, T, D).
        training: bool. Whether dropout is active.

    Returns:
        Tensor (B, T, output_dim).

    Example:

    >>> import numpy as np
    >>> tuple(FeedForward(intermediate_dim=8)(np.ones((2, 3, 4), "float32")).shape)
    (2, 3, 4)
    """

    def __init__(
        self,
        intermediate_dim,
        output_dim=None,
        activation="relu",
        dropout=0.0,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_positive_int("output_dim", output_dim, allow_none=True)
        check_rate("dropout", dropout)
        self.intermediate_dim = intermediate_dim
        self.output_dim = output_dim
        self.activation = keras.activations.get(activation)
        self.dropout = float(dropout)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.supports_masking = True
        self.intermediate_dense = self._dense(
            intermediate_dim, "intermediate_dense", activation=self.activation
        )
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")

    def _dense(self, units, name, activation=None):
        return keras.layers.Dense(
            units,
            activation=activation,
            kernel_initializer=sublayer_initializer(self.kernel_initializer, name),
            bias_initializer=sublayer_initializer(self.bias_initializer, name),
            dtype=self.dtype_policy,
            name=name,
        )

    def build(self, input_shape):
        self.intermediate_dense.build(input_shape)
        # Created here: its default width is the input's, unknown until now.
        self.output_dense = self._dense(self.output_dim or input_shape[-1], "output_dense")
        self.output_dense.build(tuple(input_shape[:-1]) + (self.intermediate_dim,))

    def call(self, inputs, training=None):
        hidden = self.intermediate_dense(inputs)  # (B, T, intermediate_dim)
        hidden = self.dropout_layer(hidden, training=training)
        return self.output_dense(hidden)  # (B, T, output_dim)

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.output_dim or input_shape[-1],)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "intermediate_dim": self.intermediate_dim,
                "output_dim": self.output_dim,
                "activation": keras.activations.serialize(self.activation),
                "dropout": self.dropout,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config
