"""Private to `layers/`: the argument checks the layers share, written once.

Every check raises a `ValueError` that names the argument and echoes the value
received, as Keras' own layers do, so a bad config says which key to fix.

Example:

>>> check_positive_int("num_heads", 0)
Traceback (most recent call last):
...
ValueError: The argument `num_heads` must be a positive integer. Received: num_heads=0
>>> check_rate("dropout", 0.1)  # valid: returns None
"""


def check_positive_int(name, value, allow_none=False):
    """`value` is an int > 0 (bools are rejected), or None when `allow_none`."""
    if allow_none and value is None:
        return
    # bool is an int subclass: `num_heads=True` is a mistake, not 1 head.
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(
            f"The argument `{name}` must be a positive integer{_or_none(allow_none)}. "
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


def output_shape_from_keras_names(output_dim, output_shape):
    """The output's trailing shape as a tuple, or None for the query's size: from our
    `output_dim` (an int) or Keras' `output_shape` (an int or a tuple of ints)."""
    check_positive_int("output_dim", output_dim, allow_none=True)
    if output_shape is None:
        return None if output_dim is None else (output_dim,)
    shape = (output_shape,) if isinstance(output_shape, int) else output_shape
    try:
        shape = tuple(shape)
    except TypeError:
        shape = ()
    if not shape or any(
        isinstance(size, bool) or not isinstance(size, int) or size <= 0 for size in shape
    ):
        raise ValueError(
            f"Invalid `output_shape`: {output_shape!r}. Give a positive int or a tuple of "
            "positive ints."
        )
    if output_dim is not None and (output_dim,) != shape:
        raise ValueError(
            "`output_dim` and `output_shape` are the same setting; give one. "
            f"Received: output_dim={output_dim}, output_shape={output_shape!r}"
        )
    return shape


def _or_none(allow_none):
    return " or None" if allow_none else ""
