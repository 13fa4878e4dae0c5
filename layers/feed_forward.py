"""Position-wise feed-forward network."""

import keras


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
        kernel_initializer, bias_initializer: initializers of both layers.
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
        for name, value in (("intermediate_dim", intermediate_dim), ("output_dim", output_dim)):
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value <= 0
            ):
                raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1). Received: dropout={dropout}")
        self.intermediate_dim = intermediate_dim
        self.output_dim = output_dim
        self.activation = keras.activations.get(activation)
        self.dropout = float(dropout)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.supports_masking = True
        dense_arguments = {
            "kernel_initializer": self.kernel_initializer,
            "bias_initializer": self.bias_initializer,
            "dtype": self.dtype_policy,
        }
        self.intermediate_dense = keras.layers.Dense(
            intermediate_dim,
            activation=self.activation,
            name="intermediate_dense",
            **dense_arguments,
        )
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")
        self._output_dense_arguments = dense_arguments

    def build(self, input_shape):
        self.intermediate_dense.build(input_shape)
        self.output_dense = keras.layers.Dense(
            self.output_dim or input_shape[-1], name="output_dense", **self._output_dense_arguments
        )
        self.output_dense.build(tuple(input_shape[:-1]) + (self.intermediate_dim,))

    def call(self, inputs, training=None):
        hidden = self.intermediate_dense(inputs)  # (B, T, intermediate_dim)
        hidden = self.dropout_layer(hidden, training=training)
        return self.output_dense(hidden)  # (B, T, D)

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
