"""Private to `layers/`: the argument checks the layers share, written once.

Every check raises a `ValueError` that names the argument and echoes the value
received, as Keras' own layers do, so a bad config says which key to fix.

Example:

>>> check_positive_int("num_heads", 0)
Traceback (most recent call last):
...
ValueError: `num_heads` must be a positive integer. Received: num_heads=0
>>> check_rate("dropout", 0.1)  # valid: returns None
"""


def check_positive_int(name, value, allow_none=False):
    """`value` is an int > 0 (bools are rejected), or None when `allow_none`."""
    if allow_none and value is None:
        return
    # bool is an int subclass: `num_heads=True` is a mistake, not 1 head.
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(
            f"`{name}` must be a positive integer{_or_none(allow_none)}. "
            f"Received: {name}={value!r}"
        )


def check_positive(name, value, allow_none=False):
    """`value` is a number > 0, or None when `allow_none`."""
    if allow_none and value is None:
        return
    if not value > 0:
        raise ValueError(
            f"`{name}` must be positive{_or_none(allow_none)}. Received: {name}={value}"
        )


def check_rate(name, value):
    """`value` is a dropout rate in [0, 1): 1 would drop everything."""
    if not 0.0 <= value < 1.0:
        raise ValueError(f"`{name}` must be in [0, 1). Received: {name}={value}")


def check_one_of(name, value, choices):
    """`value` is one of `choices`."""
    if value not in choices:
        listed = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"`{name}` must be one of {listed}. Received: {name}={value!r}")


def output_dim_from_keras_names(output_dim, output_shape):
    """`output_dim`, or Keras' `output_shape` (an int or a 1-tuple) under our name."""
    if output_shape is None:
        return output_dim
    shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
    if len(shape) != 1:
        raise ValueError(
            "Only one output dimension is supported: pass `output_shape` as an int and "
            f"reshape the output. Received: output_shape={output_shape!r}"
        )
    if output_dim is not None and output_dim != shape[0]:
        raise ValueError(
            "`output_dim` and `output_shape` are the same setting; give one. "
            f"Received: output_dim={output_dim}, output_shape={output_shape!r}"
        )
    return shape[0]


def check_sequence_axis(attention_axes):
    """Only attention over the sequence axis of (B, T, D) inputs: Keras' default."""
    axes = (attention_axes,) if isinstance(attention_axes, int) else attention_axes
    if axes is not None and tuple(axes) not in ((1,), (-2,)):
        raise ValueError(
            "Attention over other axes than the sequence axis is not supported: leave "
            "`attention_axes=None` (inputs (B, T, D)) or use keras.layers.MultiHeadAttention. "
            f"Received: attention_axes={attention_axes!r}"
        )


def check_no_gate(use_gate):
    """Keras' gated attention (`use_gate=True`) is not implemented."""
    if use_gate:
        raise ValueError(
            "Gated attention is not supported: pass `use_gate=False` or use "
            f"keras.layers.MultiHeadAttention. Received: use_gate={use_gate!r}"
        )


def _or_none(allow_none):
    return " or None" if allow_none else ""
