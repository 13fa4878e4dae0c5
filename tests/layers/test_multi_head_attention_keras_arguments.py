"""MultiHeadAttention takes keras.layers.MultiHeadAttention's arguments, with their meaning."""

import re

import keras
import numpy as np
import pytest

from layers import MultiHeadAttention
from tests.layers.layer_test_case import check_config_round_trip, to_numpy

RNG = np.random.default_rng(3)
B, T, S, D, N = 2, 4, 6, 8, 2


def random(*shape):
    return RNG.normal(size=shape).astype("float32")


def paired(query, value, **kwargs):
    """Our layer and Keras' with the same arguments and weights."""
    ours, theirs = MultiHeadAttention(**kwargs), keras.layers.MultiHeadAttention(**kwargs)
    ours(query, value, return_attention_scores=True)
    theirs(query, value, return_attention_scores=True)
    theirs.set_weights([random(*w.shape) * 0.3 for w in theirs.get_weights()])
    ours.set_weights(theirs.get_weights())
    return ours, theirs


def assert_same_call(ours, theirs, query, value, **call_kwargs):
    output, scores = ours(query, value, return_attention_scores=True, **call_kwargs)
    expected, expected_scores = theirs(query, value, return_attention_scores=True, **call_kwargs)
    np.testing.assert_allclose(to_numpy(output), to_numpy(expected), atol=1e-5)
    np.testing.assert_allclose(to_numpy(scores), to_numpy(expected_scores), atol=1e-6)
    return to_numpy(scores)


def attending_mask(*shape):
    """A random boolean mask whose last two axes (T, S) keep the diagonal: no empty row."""
    mask = RNG.random(shape) > 0.5
    mask[..., np.arange(T), np.arange(T)] = True
    return mask


@pytest.mark.parametrize("shape", [(B, T, S), (T, S), (B, N, T, S), (B, 1, T, S)])
def test_every_documented_mask_shape_broadcasts_as_in_keras(shape):
    query, value = random(B, T, D), random(B, S, D)
    ours, theirs = paired(query, value, num_heads=N, key_dim=4)
    mask = attending_mask(*shape)
    scores = assert_same_call(ours, theirs, query, value, attention_mask=mask)
    broadcast = np.broadcast_to(mask if len(shape) == 4 else mask[..., None, :, :], scores.shape)
    assert (scores[~broadcast] == 0.0).all()


@pytest.mark.parametrize(
    "shape", [(S,), (B, 3, T, S), (B, T, S + 1), (B, T + 1, S), (1, B, N, T, S)]
)
def test_other_mask_shapes_are_refused_with_the_shapes_accepted(shape):
    layer = MultiHeadAttention(num_heads=N)
    with pytest.raises(ValueError) as error:
        layer(random(B, T, D), random(B, S, D), attention_mask=np.ones(shape, bool))
    message = str(error.value)
    assert "must have shape (B, T, S), (T, S), (B, N, T, S) or (B, 1, T, S)" in message
    assert f"Received: attention_mask.shape={tuple(shape)}" in message


@pytest.mark.parametrize("query_length", [T, S])
def test_use_causal_mask_per_call_matches_keras_and_the_constructor_flag(query_length):
    query, value = random(B, query_length, D), random(B, S, D)
    ours, theirs = paired(query, value, num_heads=N, key_dim=4)
    scores = assert_same_call(ours, theirs, query, value, use_causal_mask=True)
    always_causal = MultiHeadAttention(num_heads=N, key_dim=4, causal=True)
    always_causal(query, value)
    always_causal.set_weights(ours.get_weights())
    _, constructor_scores = always_causal(query, value, return_attention_scores=True)
    np.testing.assert_array_equal(to_numpy(constructor_scores), scores)
    # Causal with T != S is Keras' bottom-right-free convention: query i sees keys 0..i.
    assert (
        scores[:, :, np.triu_indices(query_length, 1, S)[0], np.triu_indices(query_length, 1, S)[1]]
        == 0
    ).all()


@pytest.mark.parametrize("use_causal_mask", [False, True])
def test_sliding_window_matches_keras(use_causal_mask):
    x = random(B, S, D)
    ours, theirs = paired(x, x, num_heads=N, key_dim=4, sliding_window=2)
    scores = assert_same_call(ours, theirs, x, x, use_causal_mask=use_causal_mask)
    assert (scores[..., 0, 2:] == 0).all() and (scores[..., 0, :2] > 0).all() != use_causal_mask


def test_regularizers_constraints_and_activity_regularizer_train_as_in_keras():
    kwargs = {
        "num_heads": N,
        "key_dim": 4,
        "kernel_regularizer": keras.regularizers.L2(0.1),
        "bias_regularizer": "l1",
        "activity_regularizer": keras.regularizers.L2(0.01),
        "kernel_constraint": "non_neg",
        "bias_constraint": keras.constraints.MaxNorm(0.5),
    }
    x, targets = random(B, T, D), random(B, 2)

    def model_with(attention):
        inputs = keras.Input((T, D))
        pooled = keras.layers.GlobalAveragePooling1D()(attention(inputs, inputs))
        model = keras.Model(inputs, keras.layers.Dense(2)(pooled))
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse", jit_compile=False)
        return model

    theirs = model_with(keras.layers.MultiHeadAttention(**kwargs))
    ours = model_with(MultiHeadAttention(**kwargs))
    ours.set_weights([np.abs(w) for w in theirs.get_weights()])
    theirs.set_weights(ours.get_weights())
    np.testing.assert_allclose(
        ours.train_on_batch(x, targets), theirs.train_on_batch(x, targets), rtol=1e-5
    )
    for our_weight, their_weight in zip(ours.weights, theirs.weights):
        np.testing.assert_allclose(to_numpy(our_weight), to_numpy(their_weight), atol=1e-5)
    assert min(to_numpy(w).min() for w in ours.layers[1].weights if "kernel" in w.path) >= 0.0


@pytest.mark.parametrize("output_shape", [9, (9,), [9]])
def test_output_shape_is_kerass_name_for_output_dim(output_shape):
    layer = MultiHeadAttention(num_heads=N, output_shape=output_shape)
    assert tuple(layer(random(B, T, D)).shape) == (B, T, 9) and layer.output_dim == 9


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"output_shape": 8.0}, r"Invalid `output_shape`: 8.0"),
        ({"output_shape": (2, 0)}, r"Invalid `output_shape`: \(2, 0\)"),
        ({"output_shape": 8, "output_dim": 4}, "same setting; give one"),
        ({"sliding_window": 0}, "Received: sliding_window=0"),
    ],
)
def test_invalid_keras_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(num_heads=N, **kwargs)


@pytest.mark.parametrize("axes", [(2,), (1, 1), (True,)])
def test_attention_axes_that_are_not_distinct_inner_axes_are_refused(axes):
    message = f"of rank 3. Received: attention_axes={axes!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        MultiHeadAttention(num_heads=N, attention_axes=axes)(random(B, T, D))


def test_a_per_example_head_mask_reaches_each_examples_rows():
    layer = MultiHeadAttention(num_heads=N, key_dim=4, attention_axes=(2,), bias_initializer="ones")
    x = random(B, 3, T, D)
    head_mask = np.array([[1.0, 1.0], [0.0, 0.0]], "float32")  # example 1: every head off
    output = to_numpy(layer(x, head_mask=head_mask))
    np.testing.assert_allclose(output[0], to_numpy(layer(x))[0], atol=1e-6)
    np.testing.assert_allclose(output[1], np.ones((3, T, D)), atol=1e-6)  # the bias alone


@pytest.mark.parametrize(
    "kwargs, query_shape, mask_shape",
    [
        ({"use_gate": True}, (B, T, D), (B, T, T)),
        ({"output_shape": (2, 3)}, (B, T, D), (B, T, T)),
        ({"attention_axes": (2,)}, (B, 3, T, D), (B, 3, T, T)),  # each of 3 rows on its own
        ({"attention_axes": (2,)}, (B, 3, T, D), (B, T, T)),  # one mask per example
        ({"attention_axes": -2, "use_gate": True}, (B, 3, T, D), (T, T)),
        ({"attention_axes": None}, (B, 3, T, D), None),  # over both axes at once
        ({"attention_axes": (1,)}, (B, T, 3, D), None),
    ],
)
def test_keras_arguments_give_kerass_outputs(kwargs, query_shape, mask_shape):
    query, value = random(*query_shape), random(*query_shape)
    ours, theirs = paired(query, value, num_heads=N, key_dim=4, **kwargs)
    call = {} if mask_shape is None else {"attention_mask": attending_mask(*mask_shape)}
    assert_same_call(ours, theirs, query, value, **call)


@pytest.mark.parametrize("flash_attention", [True, False])
def test_flash_attention_chooses_the_fused_kernel(flash_attention):
    layer = MultiHeadAttention(num_heads=N, flash_attention=flash_attention)
    assert layer.attention._use_fused_kernel is flash_attention


def test_config_with_every_keras_argument_round_trips():
    layer = MultiHeadAttention(
        N,
        4,
        value_dim=3,
        dropout=0.1,
        use_bias=False,
        output_shape=5,
        sliding_window=3,
        flash_attention=False,
        kernel_regularizer="l2",
        bias_regularizer="l1",
        activity_regularizer="l2",
        kernel_constraint="non_neg",
        bias_constraint="unit_norm",
        seed=4,
    )
    check_config_round_trip(layer)
    config = layer.get_config()
    assert config["output_dim"] == 5 and config["sliding_window"] == 3
    assert config["kernel_regularizer"]["class_name"] == "L2"
    assert config["bias_constraint"]["class_name"] == "UnitNorm"
