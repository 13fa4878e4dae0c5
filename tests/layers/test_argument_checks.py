import re

import pytest

from layers.argument_checks import (
    check_one_of,
    check_positive,
    check_positive_int,
    check_rate,
)


@pytest.mark.parametrize(
    "check, args, message",
    [
        (
            check_positive_int,
            ("num_heads", 0),
            "The argument `num_heads` must be a positive integer. Received: num_heads=0",
        ),
        (
            check_positive_int,
            ("num_heads", True),
            "The argument `num_heads` must be a positive integer. Received: num_heads=True",
        ),
        (
            check_positive_int,
            ("key_dim", 2.0),
            "The argument `key_dim` must be a positive integer. Received: key_dim=2.0",
        ),
        (
            check_positive_int,
            ("key_dim", -1, True),
            "The argument `key_dim` must be a positive integer or None. Received: key_dim=-1",
        ),
        (
            check_positive,
            ("layer_norm_epsilon", 0),
            "`layer_norm_epsilon` must be positive. Received: layer_norm_epsilon=0",
        ),
        (
            check_positive,
            ("scale", -1.0, True),
            "`scale` must be positive or None. Received: scale=-1.0",
        ),
        (check_rate, ("dropout", 1.0), "`dropout` must be in [0, 1). Received: dropout=1.0"),
        (check_rate, ("dropout", -0.1), "`dropout` must be in [0, 1). Received: dropout=-0.1"),
        (
            check_one_of,
            ("pooling", "sum", ("mean", "max")),
            "`pooling` must be one of 'mean', 'max'. Received: pooling='sum'",
        ),
    ],
)
def test_errors_name_the_argument_and_echo_the_value(check, args, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        check(*args)


@pytest.mark.parametrize(
    "check, args",
    [
        (check_positive_int, ("num_heads", 1)),
        (check_positive_int, ("key_dim", None, True)),
        (check_positive, ("scale", 0.5)),
        (check_positive, ("scale", None, True)),
        (check_rate, ("dropout", 0.0)),
        (check_one_of, ("pooling", "max", ("mean", "max"))),
    ],
)
def test_valid_values_pass(check, args):
    assert check(*args) is None
