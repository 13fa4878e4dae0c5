import keras
import numpy as np

from layers import ClassToken
from tests.layers.layer_test_case import to_numpy


def test_prepends_the_same_learned_vector_and_extends_the_mask():
    layer = ClassToken(initializer="ones")
    x = np.zeros((2, 3, 4), "float32")
    mask = np.array([[True, False, False], [True, True, True]])
    out = to_numpy(layer(x))  # not np.asarray: a torch tensor that requires grad refuses it
    assert out.shape == (2, 4, 4)
    np.testing.assert_array_equal(out[:, 0], np.ones((2, 4)))
    np.testing.assert_array_equal(out[:, 1:], x)
    np.testing.assert_array_equal(
        to_numpy(layer.compute_mask(x, mask)),
        [[True, True, False, False], [True, True, True, True]],
    )
    assert layer.compute_mask(x, None) is None


def test_config_round_trip():
    layer = ClassToken(name="class_token")
    restored = ClassToken.from_config(layer.get_config())
    assert isinstance(restored.initializer, keras.initializers.RandomNormal)
    assert layer.compute_output_shape((None, 5, 8)) == (None, 6, 8)
