import math

import numpy as np
import pytest

from layers import SinusoidalPositionalEncoding
from tests.layers.layer_test_case import to_numpy


def float64_reference(length, d_model, start=0):
    positions = np.arange(start, start + length, dtype=np.float64)[:, None]
    channels = np.arange(d_model)
    angles = positions / np.power(10000.0, (channels - channels % 2) / d_model)
    return np.where(channels % 2 == 0, np.sin(angles), np.cos(angles))


def test_values_at_positions_zero_and_three():
    encoding = to_numpy(SinusoidalPositionalEncoding()(np.zeros((1, 4, 4), "float32")))[0]
    np.testing.assert_allclose(encoding[0], [0.0, 1.0, 0.0, 1.0], atol=1e-7)
    # Position 3: [sin 3, cos 3, sin(3/100), cos(3/100)].
    np.testing.assert_allclose(
        encoding[3], [0.14112001, -0.9899925, 0.0299955, 0.99955003], atol=1e-6
    )


def test_odd_d_model_and_start_offset():
    layer = SinusoidalPositionalEncoding()
    encoding = to_numpy(layer(np.zeros((2, 6, 5), "float32"), start_index=7))
    assert encoding.shape == (2, 6, 5)
    np.testing.assert_allclose(encoding[1], float64_reference(6, 5, start=7), atol=1e-5)
    longer = to_numpy(layer(np.zeros((1, 13, 5), "float32")))[0]
    np.testing.assert_allclose(encoding[0], longer[7:], atol=1e-6)
    assert math.isclose(encoding[0, 0, 4], math.sin(7 / 10000 ** (4 / 5)), abs_tol=1e-6)


def test_float16_is_accurate_at_length_2048():
    layer = SinusoidalPositionalEncoding(dtype="float16")
    encoding = to_numpy(layer(np.zeros((1, 2048, 64), "float16")))[0]
    assert encoding.dtype == np.float16
    error = np.abs(encoding.astype(np.float64) - float64_reference(2048, 64)).max()
    # float16 rounding alone is up to 2**-11 ~ 4.9e-4 for values in [-1, 1].
    assert error < 1e-3, error


def test_invalid_max_wavelength():
    with pytest.raises(ValueError, match="Received: max_wavelength=0"):
        SinusoidalPositionalEncoding(max_wavelength=0)
