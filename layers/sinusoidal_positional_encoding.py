"""Fixed sinusoidal positional encoding (Vaswani et al., 2017).

Shapes: B batch, T query (sequence) length, D model size (`d_model`).
"""

import math

import keras
from keras import ops

from layers.argument_checks import check_positive


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class SinusoidalPositionalEncoding(keras.layers.Layer):
    """Sinusoidal positional encoding of any sequence length.

    `PE(pos, 2i) = sin(pos / max_wavelength^(2i / d_model))` and
    `PE(pos, 2i+1) = cos(pos / max_wavelength^(2i / d_model))`, for positions
    `start_index, start_index + 1, ...`. There is no maximum length. An odd
    `d_model` is fine: the last channel is a sine. The angles are computed in
    float32 and only the result is cast to the layer's compute dtype, so a
    float16 encoding at position 2048 is as accurate as float16 allows
    (computing the angles in float16 gives errors near 1).

    The layer returns the encoding, not the sum; add it to the embeddings.

    Masking: the encoding does not depend on the mask; the layer passes the
    input mask through unchanged.

    Args:
        max_wavelength: float > 0. The longest wavelength, 10000 in the paper.
        **kwargs: base layer arguments.

    Call arguments:
        inputs: tensor (B, T, D); only its shape is used.
        start_index: int or scalar tensor. Position of the first step.

    Returns:
        A tensor with the shape of `inputs`: the encoding broadcast over B.

    Example:

    >>> import numpy as np
    >>> encoding = SinusoidalPositionalEncoding()(np.zeros((1, 4, 2), "float32"))
    >>> ops.convert_to_numpy(encoding)[0, 3].round(4)  # [sin 3, cos 3]
    array([ 0.1411, -0.99  ], dtype=float32)
    """

    def __init__(self, max_wavelength=10000.0, **kwargs):
        super().__init__(**kwargs)
        check_positive("max_wavelength", max_wavelength)
        self.max_wavelength = float(max_wavelength)
        self.supports_masking = True
        self.built = True

    def call(self, inputs, start_index=0):
        shape = ops.shape(inputs)
        length, d_model = shape[-2], shape[-1]
        positions = ops.cast(ops.arange(length) + start_index, "float32")  # (T,)
        channels = ops.arange(d_model)  # (D,)
        # Channels 2i and 2i+1 share the frequency 1 / max_wavelength^(2i / d_model).
        parity = ops.mod(channels, 2)
        even_channels = ops.cast(channels - parity, "float32")
        frequencies = ops.exp(
            -math.log(self.max_wavelength) * even_channels / ops.cast(d_model, "float32")
        )
        angles = positions[:, None] * frequencies[None, :]  # (T, D)
        encoding = ops.where(ops.equal(parity, 0), ops.sin(angles), ops.cos(angles))
        return ops.broadcast_to(ops.cast(encoding, self.compute_dtype), shape)

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({"max_wavelength": self.max_wavelength})
        return config
