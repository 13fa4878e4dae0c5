"""Layer normalisation with its scale held constant for the gradient (private helper).

Conservative propagation (Ali et al., "XAI for Transformers: Better Explanations through
Conservative Propagation", ICML 2022) treats the 1 / std of each LayerNorm as a constant,
so that gradient x input sums to the output: the encoder block and the embedding use this
when called with `detach_norm_scale=True` (`inspection.methods.attribution` does).
"""

from keras import ops


def layer_norm(norm, x, detach_scale=False):
    """`norm(x)` for a `keras.layers.LayerNormalization` over the last axis; with
    `detach_scale`, the same values but no gradient through the 1 / std factor.

    Example:
    >>> import keras, numpy as np
    >>> norm = keras.layers.LayerNormalization(epsilon=1e-5)
    >>> x = np.array([[1.0, 2.0, 3.0]], "float32")
    >>> bool(np.allclose(layer_norm(norm, x, detach_scale=True), norm(x), atol=1e-6))
    True
    """
    if not detach_scale:
        return norm(x)
    if not norm.built:
        norm.build(x.shape)
    dtype = x.dtype
    x = ops.cast(x, "float32")  # As Keras' LayerNormalization: statistics in float32.
    mean = ops.mean(x, axis=-1, keepdims=True)
    variance = ops.var(x, axis=-1, keepdims=True)
    inverse_std = ops.stop_gradient(ops.rsqrt(variance + norm.epsilon))
    outputs = (x - mean) * inverse_std
    if norm.scale:
        outputs = outputs * ops.cast(norm.gamma, "float32")
    if norm.center:
        outputs = outputs + ops.cast(norm.beta, "float32")
    return ops.cast(outputs, dtype)
