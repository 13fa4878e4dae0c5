"""One shared contract check for every layer (after keras-hub's `run_layer_test`)."""

import os

import keras
import numpy as np
from keras import ops


def to_numpy(x):
    return np.asarray(ops.convert_to_numpy(x))


def assert_pairwise_different(weights):
    """No two of the named weights come from the same random draws.

    Two weights initialized with one seed draw the same numbers, scaled by their own fans
    when their shapes differ, so their flattened values correlate perfectly. The weights
    must have the same size, so that the check means something.
    """
    arrays = {name: to_numpy(weight).ravel() for name, weight in weights.items()}
    assert len({array.size for array in arrays.values()}) == 1, "pick equal-sized weights"
    names = list(arrays)
    for index, first in enumerate(names):
        for second in names[index + 1:]:
            correlation = np.corrcoef(arrays[first], arrays[second])[0, 1]
            assert abs(correlation) < 0.99, f"{first} and {second} start from the same draws"


def assert_same_weights(layer, other):
    assert len(layer.weights) == len(other.weights)
    for weight, other_weight in zip(layer.weights, other.weights):
        np.testing.assert_array_equal(to_numpy(weight), to_numpy(other_weight), weight.path)


def check_config_round_trip(layer):
    config = layer.get_config()
    clone = layer.__class__.from_config(config)
    assert clone.get_config() == config


def sequence_model(layer_factory, feature_dim):
    """Input (B, None, D) -> layer -> mean pooling -> Dense(2): a symbolic call, unknown length."""
    inputs = keras.Input((None, feature_dim))
    outputs = layer_factory()(inputs)
    assert tuple(outputs.shape) in {(None, None, feature_dim), (None, None, outputs.shape[-1])}
    pooled = keras.layers.GlobalAveragePooling1D()(outputs)
    return keras.Model(inputs, keras.layers.Dense(2)(pooled))


def check_training_step(model, inputs):
    keras.utils.set_random_seed(0)
    targets = np.random.default_rng(0).normal(size=(inputs.shape[0], 2)).astype("float32")
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    history = model.fit(inputs, targets, epochs=1, batch_size=len(inputs), verbose=0)
    assert np.isfinite(history.history["loss"][0])
    after = [to_numpy(w) for w in model.trainable_weights]
    assert all(np.isfinite(w).all() for w in after)
    assert any(not np.allclose(b, a) for b, a in zip(before, after)), "no weight changed"


def check_save_and_load(model, inputs, directory):
    path = os.path.join(directory, "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(
        to_numpy(model.predict(inputs, verbose=0)),
        to_numpy(reloaded.predict(inputs, verbose=0)),
        rtol=1e-6,
        atol=1e-6,
    )


def run_layer_test(layer_factory, feature_dim, tmp_path, batch=3, length=5):
    """Config round trip, symbolic call, a training step and `.keras` save/load."""
    check_config_round_trip(layer_factory())
    model = sequence_model(layer_factory, feature_dim)
    inputs = np.random.default_rng(1).normal(size=(batch, length, feature_dim)).astype("float32")
    check_training_step(model, inputs)
    check_save_and_load(model, inputs, str(tmp_path))
