"""One contract for every public layer (after keras-hub's `run_layer_test`).

`run_layer_test` checks, for one layer: `get_config` / `from_config` and
`keras.saving.serialize_keras_object` round trips; a symbolic call with unknown length;
a training step whose gradients reach every trainable weight; finite `mixed_float16`
outputs (token ids stay integers); the Keras mask passed on (and the real positions'
outputs unchanged by the padding); and a `.keras` save/load in safe mode.
"""

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
        for second in names[index + 1 :]:
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
    serialized = keras.saving.serialize_keras_object(layer)
    assert serialized["registered_name"].startswith("keras_attention_lab>")
    restored = keras.saving.deserialize_keras_object(serialized)
    assert type(restored) is type(layer) and restored.get_config() == config


def first_output(outputs):
    return outputs[0] if isinstance(outputs, (tuple, list)) else outputs


class MaskOf(keras.layers.Layer):
    """The Keras mask its input carries, as float32 (B, T): all ones when there is none."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return ops.ones(ops.shape(inputs)[:2])
        return ops.cast(mask, "float32")

    def compute_mask(self, inputs, mask=None):
        return None


def symbolic_inputs(arrays):
    """One `keras.Input` per array, the length axis (1) unknown."""
    return [keras.Input((None,) + a.shape[2:], dtype=str(a.dtype)) for a in arrays]


def check_symbolic_call(layer_factory, arrays):
    inputs = symbolic_inputs(arrays)
    symbolic = first_output(layer_factory()(*inputs))
    eager = first_output(layer_factory()(*arrays))
    assert len(symbolic.shape) == len(eager.shape)
    known = [size for axis, size in enumerate(symbolic.shape) if axis > 1 or size is not None]
    assert known == [s for axis, s in enumerate(eager.shape) if axis > 1 or symbolic.shape[axis]]


def check_training_step(layer_factory, arrays, no_gradient):
    """One SGD step: every trainable weight moves (its gradient is not zero)."""
    keras.utils.set_random_seed(0)
    inputs = symbolic_inputs(arrays)
    layer = layer_factory()
    outputs = ops.cast(first_output(layer(*inputs)), "float32")
    model = keras.Model(inputs, outputs)
    eager_output = to_numpy(model(arrays))
    targets = np.random.default_rng(0).normal(size=eager_output.shape).astype("float32")
    before = {w.path: to_numpy(w).copy() for w in layer.trainable_weights}
    # One step of a tiny model: compiling it (JAX's default) costs more than it saves.
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", jit_compile=False)
    assert np.isfinite(model.train_on_batch(arrays, targets))
    for weight in layer.trainable_weights:
        after = to_numpy(weight)
        assert np.isfinite(after).all(), weight.path
        if not weight.path.endswith(no_gradient):
            assert not np.allclose(before[weight.path], after), f"no gradient: {weight.path}"


def check_mixed_float16(layer_factory, arrays, integer_output):
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        layer = layer_factory()
        outputs = [first_output(layer(*arrays))]
        if integer_output:  # ids stay ids in training too, and in the graph
            outputs.append(first_output(layer_factory()(*arrays, training=True)))
            outputs.append(first_output(layer_factory()(*symbolic_inputs(arrays))))
    finally:
        keras.config.set_dtype_policy(previous)
    expected = keras.backend.standardize_dtype(arrays[0].dtype) if integer_output else "float16"
    assert [keras.backend.standardize_dtype(x.dtype) for x in outputs] == [expected] * len(outputs)
    assert all(keras.backend.standardize_dtype(w.dtype) == "float32" for w in layer.weights)
    assert np.isfinite(to_numpy(outputs[0]).astype("float32")).all()


def check_masking(layer_factory, arrays, real_length, length_offset, sequence_output):
    """Example 0 is padded after `real_length` positions (zeros: a float input goes
    through `Masking(0.0)`, token ids mask themselves). The mask must come out shifted
    by `length_offset` (or not at all from a pooling layer), and example 0's real
    outputs must equal those of the layer on its unpadded input."""
    inputs = symbolic_inputs(arrays)
    first = inputs[0]
    masked = first if "int" in first.dtype else keras.layers.Masking(0.0)(first)
    layer = layer_factory()
    outputs = first_output(layer(masked, *inputs[1:]))
    model = keras.Model(inputs, [outputs, MaskOf()(outputs) if sequence_output else outputs])
    padded_output, mask = (to_numpy(x) for x in model(arrays))
    unpadded = [a[:1, :real_length] if i == 0 else a[:1] for i, a in enumerate(arrays)]
    expected = to_numpy(first_output(layer(*unpadded)))
    if sequence_output:
        kept = real_length + length_offset
        np.testing.assert_allclose(padded_output[:1, :kept], expected, rtol=1e-5, atol=1e-5)
        assert (mask[0, :kept] == 1).all() and (mask[0, kept:] == 0).all()
        assert (mask[1:] == 1).all()
    else:
        np.testing.assert_allclose(padded_output[:1], expected, rtol=1e-5, atol=1e-5)


def check_save_and_load(layer_factory, arrays, directory):
    inputs = symbolic_inputs(arrays)
    model = keras.Model(inputs, first_output(layer_factory()(*inputs)))
    path = os.path.join(directory, "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(
        to_numpy(model.predict(arrays, verbose=0)),
        to_numpy(reloaded.predict(arrays, verbose=0)),
        rtol=1e-6,
        atol=1e-6,
    )


def run_layer_test(
    layer_factory,
    inputs,
    tmp_path,
    *,
    real_length=None,
    length_offset=0,
    sequence_output=True,
    no_gradient=(),
    integer_output=False,
):
    """The layer contract.

    Args:
        layer_factory: makes a fresh layer (called several times).
        inputs: the call's positional inputs, an array or a tuple of arrays, each with a
            length axis 1; with `real_length`, the first one's example 0 is padding
            (zeros) from `real_length` on and the others are not padded.
        real_length: None for a layer that takes no Keras mask; otherwise the masking
            check runs.
        length_offset: positions the layer adds in front (a class token: 1).
        sequence_output: False for a layer that pools the length axis away.
        no_gradient: weight path endings whose gradient is zero by design (the key bias
            of attention: softmax ignores a logit shift shared by all keys).
        integer_output: the layer maps token ids to token ids (TokenDropout), which keep
            their dtype under `mixed_float16`.
    """
    arrays = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    check_config_round_trip(layer_factory())
    check_symbolic_call(layer_factory, arrays)
    check_training_step(layer_factory, arrays, tuple(no_gradient))
    check_mixed_float16(layer_factory, arrays, integer_output)
    if real_length is not None:
        check_masking(layer_factory, arrays, real_length, length_offset, sequence_output)
    check_save_and_load(layer_factory, arrays, str(tmp_path))


def padded_features(batch=3, length=5, feature_dim=4, real_length=3, seed=1):
    """(B, T, D) float32 features; example 0 is zero (padding) from `real_length` on."""
    features = np.random.default_rng(seed).normal(size=(batch, length, feature_dim))
    features[0, real_length:] = 0.0
    return features.astype("float32")


def padded_token_ids(batch=3, length=5, vocabulary_size=20, real_length=3, seed=1):
    """(B, T) int32 ids in 1..vocabulary_size-1; example 0 is 0 (padding) from `real_length` on."""
    ids = np.random.default_rng(seed).integers(1, vocabulary_size, size=(batch, length))
    ids[0, real_length:] = 0
    return ids.astype("int32")
