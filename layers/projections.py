"""The attention's projections: Keras' `EinsumDense` layers, built as Keras' own attention
builds them (the head sizes, the arguments each takes, the names LoRA targets), and a
matmul fast path.

Private to `MultiHeadAttention`. The projections are Keras' own layers so that what Keras
does to its attention (int8 `quantize`, `enable_lora`, `DTypePolicyMap` dtypes) works on
ours. While a projection is a float one, it runs as one matmul on its flattened kernel:
TensorFlow's Einsum op, which `EinsumDense.call` uses, measured 5-9% slower at 64 tokens
(bench/bench_attention.py); the traced graph is then the one of the layer before it held
sublayers, op for op.

Shapes: B batch, T length, D model size, N heads, H head size, Hv value head size.
"""

import math

import keras
from keras import ops

from layers.initializers import sublayer_initializer

# A multi-head attention's projections, by the names its `enable_lora` takes.
PROJECTIONS = ("query", "key", "value", "gate", "output")


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
    layer.build((None, None, *input_shape[-len(inputs) :]))
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


def projection_arguments(attention):
    """keras.layers.MultiHeadAttention's arguments that each of its projections takes, by
    their Keras names, from the `MultiHeadAttention` `attention`'s attributes (the activity
    regularizer is the projections': the base layer's would act on the output only)."""
    return {
        "kernel_initializer": attention.kernel_initializer,
        "bias_initializer": attention.bias_initializer,
        "kernel_regularizer": attention.kernel_regularizer,
        "bias_regularizer": attention.bias_regularizer,
        "activity_regularizer": attention.projection_activity_regularizer,
        "kernel_constraint": attention.kernel_constraint,
        "bias_constraint": attention.bias_constraint,
    }


def check_lora_targets(targets, use_gate):
    """A `ValueError` unless `targets` are among `PROJECTIONS` (gate only with `use_gate`).

    Example:
    >>> check_lora_targets(("query", "value"), use_gate=False)
    >>> check_lora_targets(("gate",), use_gate=False)
    Traceback (most recent call last):
    ...
    ValueError: LoRA targets are among ('query', 'key', 'value', 'gate', 'output') (gate with \
use_gate). Received: targets=('gate',)
    """
    for target in targets:
        if target not in PROJECTIONS or (target == "gate" and not use_gate):
            raise ValueError(
                f"LoRA targets are among {PROJECTIONS} (gate with use_gate). "
                f"Received: targets={targets!r}"
            )


def head_sizes(d_model, num_heads, key_dim=None, value_dim=None):
    """(H, Hv), the query/key and the value head sizes: `key_dim` or D // N (the original
    Transformer's split of D), and `value_dim` or H.

    Example:
    >>> head_sizes(16, 4), head_sizes(16, 3, key_dim=8, value_dim=2)
    ((4, 4), (8, 2))
    """
    if key_dim is None and d_model % num_heads:
        raise ValueError(
            "The query's last dimension must be divisible by `num_heads` when `key_dim` "
            f"is not given. Received: d_model={d_model}, num_heads={num_heads}"
        )
    head_dim = key_dim or d_model // num_heads
    return head_dim, value_dim or head_dim


def attention_projections(
    query_shape,
    value_shape,
    key_shape,
    heads,
    value_heads,
    output_shape,
    use_gate=False,
    kernel_initializer="glorot_uniform",
    bias_initializer="zeros",
    **kwargs,
):
    """A multi-head attention's projections, built, by the names of `PROJECTIONS` (gate:
    None without `use_gate`), with keras.layers.MultiHeadAttention's names and shapes.

    `heads` is (N, H) and `value_heads` (N, Hv). Each projection gets its own copy of the
    initializers (`sublayer_initializer`), so W_Q, W_K, W_V and W_O never start equal;
    `kwargs` (use_bias, the regularizers and constraints, dtype) go to every one.

    Example:
    >>> shape = (None, None, 16)
    >>> built = attention_projections(shape, shape, shape, (2, 8), (2, 4), (16,))
    >>> {name: tuple(layer.kernel.shape) for name, layer in built.items() if layer}
    {'query': (16, 2, 8), 'key': (16, 2, 8), 'value': (16, 2, 4), 'output': (2, 4, 16)}
    """

    def build(name, input_shape, shape, activation=None):
        return projection(
            name,
            input_shape,
            shape,
            activation=activation,
            kernel_initializer=sublayer_initializer(kernel_initializer, f"{name}_kernel"),
            bias_initializer=sublayer_initializer(bias_initializer, f"{name}_bias"),
            **kwargs,
        )

    return {
        "query": build("query", query_shape, heads),
        "key": build("key", key_shape, heads),
        "value": build("value", value_shape, value_heads),
        "gate": build("gate", query_shape, value_heads, "sigmoid") if use_gate else None,
        "output": build("attention_output", (None, None, *value_heads), output_shape),
    }
