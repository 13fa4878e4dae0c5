"""The attention's projections: Keras' `EinsumDense` layers, and a matmul fast path.

Private to `MultiHeadAttention`. The projections are Keras' own layers so that what Keras
does to its attention (int8 `quantize`, `enable_lora`, `DTypePolicyMap` dtypes) works on
ours. While a projection is a float one, it runs as one matmul on its flattened kernel:
TensorFlow's Einsum op, which `EinsumDense.call` uses, measured 5-9% slower at 64 tokens
(bench/bench_attention.py); the traced graph is then the one of the layer before it held
sublayers, op for op.

Shapes: B batch, T length, D model size, N heads, H head size.
"""

import math

import keras
from keras import ops


def projection(name, input_shape, output_shape, use_bias=True, **kwargs):
    """A built `EinsumDense` (B, T, *in) -> (B, T, *out), `input_shape` a full input shape
    (its last axis is `in`) or, for the output projection ("attention_output"), (B, T, N, Hv).

    Example:
    >>> tuple(projection("query", (None, None, 16), (2, 8)).kernel.shape)  # (D, N, H)
    (16, 2, 8)
    """
    inputs = "cd"[: len(input_shape) - 2] if name == "attention_output" else "c"
    outputs = "efgh"[: len(output_shape)]
    layer = keras.layers.EinsumDense(
        f"ab{inputs},{inputs}{outputs}->ab{outputs}",
        output_shape=(None, *output_shape),
        bias_axes=outputs if use_bias else None,
        name=name,
        **kwargs,
    )
    layer.build((None, None, *input_shape[-len(inputs):]))
    return layer


def project(layer, inputs, input_dims=1):
    """`layer(inputs)` for a projection (B, T, *in) -> (B, T, *out), as one matmul on the
    flattened kernel while it is a float one, in the layer's compute dtype. Quantized
    layers (and activity regularizers) go through the layer's own call."""
    if layer.quantization_mode is not None or layer.activity_regularizer is not None:
        return layer(inputs)
    compute_dtype = layer.compute_dtype
    inputs = ops.cast(inputs, compute_dtype)
    kernel = ops.cast(layer.kernel, compute_dtype)  # LoRA's A @ B included
    in_size = math.prod(kernel.shape[:input_dims])
    out_shape = tuple(kernel.shape[input_dims:])
    batch, length = ops.shape(inputs)[0], ops.shape(inputs)[1]
    if input_dims > 1:
        inputs = ops.reshape(inputs, (batch, length, in_size))  # (B, T, N*Hv)
    projected = ops.matmul(inputs, ops.reshape(kernel, (in_size, -1)))  # (B, T, prod(out))
    if layer.bias is not None:
        bias = ops.cast(layer.bias, compute_dtype)
        projected = projected + (ops.reshape(bias, (-1,)) if len(out_shape) > 1 else bias)
    if len(out_shape) > 1:
        projected = ops.reshape(projected, (batch, length, *out_shape))  # (B, T, *out)
    return layer.activation(projected)  # linear, or the gate's sigmoid
