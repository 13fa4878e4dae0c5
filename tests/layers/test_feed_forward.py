import keras
import numpy as np
import pytest

from layers import FeedForward
from tests.layers.layer_test_case import (
    assert_pairwise_different,
    assert_same_weights,
    to_numpy,
)


def test_matches_numpy_two_layer_network():
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")
    layer = FeedForward(intermediate_dim=8, output_dim=5, activation="relu", dropout=0.5)
    output = to_numpy(layer(x))
    w1, b1, w2, b2 = (np.asarray(w, np.float64) for w in layer.get_weights())
    expected = np.maximum(x @ w1 + b1, 0.0) @ w2 + b2
    np.testing.assert_allclose(output, expected, atol=1e-5)
    assert not np.allclose(to_numpy(layer(x, training=True)), output, atol=1e-4)


@pytest.mark.parametrize("seed", [1, None])
def test_the_two_kernels_start_different(seed):
    # Both kernels are (4, 4): one shared initializer would make them identical.
    layer = FeedForward(
        intermediate_dim=4, kernel_initializer=keras.initializers.GlorotUniform(seed=seed)
    )
    layer(np.ones((1, 2, 4), "float32"))
    assert_pairwise_different(
        {"intermediate": layer.intermediate_dense.kernel, "output": layer.output_dense.kernel}
    )


def test_one_seeded_config_gives_the_same_weights_twice():
    def build():
        layer = FeedForward(
            intermediate_dim=8, kernel_initializer=keras.initializers.GlorotUniform(seed=1)
        )
        layer(np.ones((1, 2, 4), "float32"))
        return layer

    layer = build()
    assert_same_weights(layer, build())
    assert layer.get_config()["kernel_initializer"]["config"]["seed"] == 1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"intermediate_dim": 0}, "Received: intermediate_dim=0"),
        ({"intermediate_dim": 4, "output_dim": -1}, "Received: output_dim=-1"),
        ({"intermediate_dim": 4, "dropout": 2.0}, "Received: dropout=2.0"),
    ],
)
def test_invalid_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FeedForward(**kwargs)
