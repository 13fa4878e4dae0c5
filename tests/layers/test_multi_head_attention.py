import keras
import numpy as np
import pytest

from layers import MultiHeadAttention
from tests.layers import reference
from tests.layers.layer_test_case import (
    assert_pairwise_different,
    assert_same_weights,
    to_numpy,
)

RNG = np.random.default_rng(0)


def random(*shape):
    return RNG.normal(size=shape).astype("float32")


def paired_layers(query, value, **kwargs):
    """Our layer and Keras' with identical weights."""
    ours = MultiHeadAttention(**kwargs)
    keras_kwargs = dict(kwargs)
    if "output_dim" in keras_kwargs:
        keras_kwargs["output_shape"] = keras_kwargs.pop("output_dim")
    theirs = keras.layers.MultiHeadAttention(**keras_kwargs)
    # Build through the scores path: Keras' fused path fails on JAX when key_dim != value_dim.
    ours(query, value, return_attention_scores=True)
    theirs(query, value, return_attention_scores=True)
    ours.set_weights([random(*w.shape) * 0.3 for w in ours.get_weights()])
    theirs.set_weights(ours.get_weights())
    return ours, theirs


def test_self_attention_with_padding_matches_keras_after_copying_weights():
    x = random(2, 5, 16)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    ours, theirs = paired_layers(x, x, num_heads=4, key_dim=8)
    output, scores = ours(x, x, query_mask=mask, value_mask=mask, return_attention_scores=True)
    expected, expected_scores = theirs(
        x, x, query_mask=mask, value_mask=mask, return_attention_scores=True
    )
    # Keras reads the query mask only from the Keras mask of `query` and ignores an
    # explicit `query_mask`, so its padded query rows differ: compare the real rows.
    np.testing.assert_allclose(to_numpy(output)[mask], to_numpy(expected)[mask], atol=1e-5)
    scores, expected_scores = to_numpy(scores), to_numpy(expected_scores)
    for example in range(2):
        real = mask[example]
        np.testing.assert_allclose(
            scores[example][:, real], expected_scores[example][:, real], atol=1e-6
        )
    fused = to_numpy(ours(x, x, query_mask=mask, value_mask=mask))
    np.testing.assert_allclose(fused[mask], to_numpy(expected)[mask], atol=1e-5)


def test_cross_attention_matches_keras_with_different_lengths_and_sizes():
    query, value = random(2, 3, 12), random(2, 7, 10)
    value_mask = RNG.random((2, 7)) > 0.3
    kwargs = {"num_heads": 2, "key_dim": 5, "value_dim": 3, "output_dim": 9}
    ours, theirs = paired_layers(query, value, **kwargs)
    output, scores = ours(query, value, value_mask=value_mask, return_attention_scores=True)
    expected, expected_scores = theirs(
        query, value, value_mask=value_mask, return_attention_scores=True
    )
    assert tuple(output.shape) == (2, 3, 9) and tuple(scores.shape) == (2, 2, 3, 7)
    np.testing.assert_allclose(to_numpy(output), to_numpy(expected), atol=1e-5)
    np.testing.assert_allclose(to_numpy(scores), to_numpy(expected_scores), atol=1e-6)


@pytest.mark.parametrize("return_scores", [True, False])
def test_matches_float64_reference(return_scores):
    query, value = random(2, 4, 8), random(2, 6, 8)
    attention_mask = RNG.random((2, 4, 6)) > 0.4
    layer = MultiHeadAttention(num_heads=2)
    layer(query, value)
    layer.set_weights([random(*w.shape) * 0.3 for w in layer.get_weights()])
    expected, expected_scores = reference.multi_head_attention(
        query, value, layer.get_weights(), attention_mask
    )
    result = layer(
        query, value, attention_mask=attention_mask, return_attention_scores=return_scores
    )
    output = result[0] if return_scores else result
    np.testing.assert_allclose(to_numpy(output), expected, atol=1e-5)
    if return_scores:
        np.testing.assert_allclose(to_numpy(result[1]), expected_scores, atol=1e-6)


def test_key_dim_defaults_to_d_model_over_num_heads():
    layer = MultiHeadAttention(num_heads=4)
    layer(random(1, 3, 32))
    assert tuple(layer.query_dense.kernel.shape) == (32, 4, 8)
    assert tuple(layer.output_dense.kernel.shape) == (4, 8, 32)


def test_keras_mask_and_explicit_masks_give_the_same_result():
    token_ids = np.array([[4, 9, 2, 0, 0], [7, 3, 0, 0, 0]])
    embedding = keras.layers.Embedding(12, 8, mask_zero=True)
    layer = MultiHeadAttention(num_heads=2)
    embedded = embedding(token_ids)
    implicit_output, implicit_scores = layer(embedded, return_attention_scores=True)
    explicit_mask = token_ids != 0
    explicit_output, explicit_scores = layer(
        to_numpy(embedded),
        query_mask=explicit_mask,
        value_mask=explicit_mask,
        return_attention_scores=True,
    )
    np.testing.assert_allclose(to_numpy(implicit_output), to_numpy(explicit_output), atol=1e-6)
    np.testing.assert_array_equal(to_numpy(implicit_scores), to_numpy(explicit_scores))
    scores = to_numpy(implicit_scores)
    assert (scores[0, :, :, 3:] == 0.0).all() and (scores[1, :, :, 2:] == 0.0).all()
    # Padded queries attend nothing.
    assert (scores[0, :, 3:] == 0.0).all()


def test_keras_mask_flows_through_a_functional_model():
    tokens = keras.Input((None,), dtype="int32")
    embedded = keras.layers.Embedding(12, 8, mask_zero=True)(tokens)
    output, scores = MultiHeadAttention(num_heads=2)(embedded, return_attention_scores=True)
    model = keras.Model(tokens, scores)
    scores = model.predict(np.array([[3, 5, 0, 0]]), verbose=0)
    assert (scores[0, :, :2, 2:] == 0.0).all()
    np.testing.assert_allclose(scores[0, :, :2].sum(-1), 1.0, atol=1e-6)


def test_attention_mask_is_combined_with_padding_masks_by_and():
    x = random(1, 4, 8)
    padding = np.array([[True, True, True, False]])
    attention_mask = np.array([[[True, False, True, True]] * 4])
    _, scores = MultiHeadAttention(num_heads=2)(
        x,
        query_mask=padding,
        value_mask=padding,
        attention_mask=attention_mask,
        return_attention_scores=True,
    )
    scores = to_numpy(scores)
    assert (scores[0, :, :3, 1] == 0.0).all() and (scores[0, :, :3, 3] == 0.0).all()
    np.testing.assert_allclose(scores[0, :, :3, [0, 2]].sum(0), 1.0, atol=1e-6)


def test_causal_attention_hides_the_future_and_dropout_only_trains():
    x = random(2, 5, 8)
    layer = MultiHeadAttention(num_heads=2, causal=True, dropout=0.5, seed=2)
    _, scores = layer(x, return_attention_scores=True)
    assert (to_numpy(scores)[..., np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0).all()
    inference = to_numpy(layer(x, training=False))
    np.testing.assert_allclose(to_numpy(layer(x, training=False)), inference)
    assert not np.allclose(to_numpy(layer(x, training=True)), inference, atol=1e-3)


def projection_kernels(layer):
    names = ("query", "key", "value", "output")
    return {name: getattr(layer, f"{name}_dense").kernel for name in names}


@pytest.mark.parametrize("seed", [1, None])
def test_query_key_value_and_output_kernels_start_different(seed):
    # D = N = H = output_dim = 4: all four kernels are (4, 4, 4), so one shared
    # initializer (seeded, or unseeded but drawn once) would make them identical.
    initializer = keras.initializers.GlorotUniform(seed=seed)
    layer = MultiHeadAttention(num_heads=4, key_dim=4, kernel_initializer=initializer)
    layer(random(1, 3, 4))
    assert_pairwise_different(projection_kernels(layer))


def test_one_seeded_config_gives_the_same_weights_twice():
    def build(layer):
        layer(random(1, 3, 8), random(1, 5, 6))
        return layer

    kwargs = {"num_heads": 2, "bias_initializer": keras.initializers.RandomNormal(seed=3)}
    layer = build(
        MultiHeadAttention(kernel_initializer=keras.initializers.GlorotUniform(seed=1), **kwargs)
    )
    again = build(
        MultiHeadAttention(kernel_initializer=keras.initializers.GlorotUniform(seed=1), **kwargs)
    )
    assert_same_weights(layer, again)
    assert_same_weights(layer, build(MultiHeadAttention.from_config(layer.get_config())))
    # The config keeps the initializer as the user gave it, not the per-kernel copies.
    assert layer.get_config()["kernel_initializer"]["config"]["seed"] == 1
    assert not np.allclose(to_numpy(layer.query_dense.bias), to_numpy(layer.key_dense.bias))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_heads": 0}, "Received: num_heads=0"),
        ({"num_heads": 2, "key_dim": -1}, "Received: key_dim=-1"),
        ({"num_heads": 2, "value_dim": 0}, "Received: value_dim=0"),
        ({"num_heads": 2, "output_dim": 2.5}, "Received: output_dim=2.5"),
        ({"num_heads": 2, "dropout": 1.0}, "Received: dropout=1.0"),
    ],
)
def test_invalid_arguments_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultiHeadAttention(**kwargs)


def test_d_model_not_divisible_by_num_heads_is_an_error():
    with pytest.raises(ValueError, match="d_model=10, num_heads=4"):
        MultiHeadAttention(num_heads=4)(random(1, 2, 10))
