import keras
import numpy as np
import pytest
from keras import ops

from layers import ScaledDotProductAttention
from tests.layers import reference
from tests.layers.layer_test_case import check_config_round_trip, to_numpy

RNG = np.random.default_rng(0)


def random(*shape):
    return RNG.normal(size=shape).astype("float32")


# Every numeric test runs the explicit path and the fused `ops.dot_product_attention` path.
PATHS = [
    pytest.param(True, None, id="scores"),
    pytest.param(False, True, id="fused-kernel"),
    pytest.param(False, False, id="explicit-no-scores"),
]


@pytest.mark.parametrize("return_scores, fused", PATHS)
def test_toy_example_gives_uniform_weights(return_scores, fused):
    query = np.full((1, 1, 4), 0.5, "float32")
    key = value = np.eye(4, dtype="float32")[None]
    layer = ScaledDotProductAttention(use_fused_kernel=fused)
    result = layer(query, key, value, return_attention_scores=return_scores)
    output = result[0] if return_scores else result
    np.testing.assert_allclose(to_numpy(output), [[[0.25, 0.25, 0.25, 0.25]]], atol=1e-7)
    if return_scores:
        np.testing.assert_allclose(to_numpy(result[1]), [[[0.25, 0.25, 0.25, 0.25]]], atol=1e-7)


@pytest.mark.parametrize("return_scores, fused", PATHS)
def test_matches_float64_reference_with_free_key_and_value_sizes(return_scores, fused):
    query, key, value = random(2, 3, 8), random(2, 5, 8), random(2, 5, 6)
    mask = RNG.random((2, 3, 5)) > 0.3
    expected_output, expected_scores = reference.attention(query, key, value, mask)
    result = ScaledDotProductAttention(use_fused_kernel=fused)(
        query, key, value, attention_mask=mask, return_attention_scores=return_scores
    )
    output = result[0] if return_scores else result
    assert tuple(output.shape) == (2, 3, 6)
    np.testing.assert_allclose(to_numpy(output), expected_output, atol=1e-5)
    if return_scores:
        np.testing.assert_allclose(to_numpy(result[1]), expected_scores, atol=1e-6)


@pytest.mark.parametrize("return_scores, fused", PATHS)
def test_multi_head_layout_matches_reference_per_head(return_scores, fused):
    query, key, value = random(2, 3, 4, 8), random(2, 6, 4, 8), random(2, 6, 4, 5)
    mask = RNG.random((2, 1, 3, 6)) > 0.3
    result = ScaledDotProductAttention(use_fused_kernel=fused)(
        query, key, value, attention_mask=mask, return_attention_scores=return_scores
    )
    output = to_numpy(result[0] if return_scores else result)
    for head in range(4):
        expected, expected_scores = reference.attention(
            query[:, :, head], key[:, :, head], value[:, :, head], mask[:, 0]
        )
        np.testing.assert_allclose(output[:, :, head], expected, atol=1e-5)
        if return_scores:
            np.testing.assert_allclose(to_numpy(result[1])[:, head], expected_scores, atol=1e-6)


def test_masked_keys_get_exactly_zero_weight_and_rows_sum_to_one():
    query, key, value = random(2, 4, 8), random(2, 4, 8), random(2, 4, 8)
    key_mask = np.array([[True, True, False, False], [True, True, True, False]])
    mask = np.broadcast_to(key_mask[:, None, :], (2, 4, 4))
    _, scores = ScaledDotProductAttention()(
        query, key, value, attention_mask=mask, return_attention_scores=True
    )
    scores = to_numpy(scores)
    assert (scores[0, :, 2:] == 0.0).all()
    assert (scores[1, :, 3] == 0.0).all()
    np.testing.assert_allclose(scores.sum(-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("return_scores, fused", PATHS)
def test_fully_masked_row_gives_finite_zeros(return_scores, fused):
    query, key, value = random(1, 2, 4), random(1, 3, 4), random(1, 3, 4)
    mask = np.array([[[True, False, True], [False, False, False]]])
    result = ScaledDotProductAttention(use_fused_kernel=fused)(
        query, key, value, attention_mask=mask, return_attention_scores=return_scores
    )
    output = to_numpy(result[0] if return_scores else result)
    assert np.isfinite(output).all()
    np.testing.assert_array_equal(output[0, 1], np.zeros(4))
    if return_scores:
        np.testing.assert_array_equal(to_numpy(result[1])[0, 1], np.zeros(3))


@pytest.mark.parametrize("query_length", [4, 2])
def test_causal_mask_hides_the_future(query_length):
    query, key, value = random(1, query_length, 4), random(1, 4, 4), random(1, 4, 4)
    layer = ScaledDotProductAttention(causal=True, use_fused_kernel=True)
    output, scores = layer(query, key, value, return_attention_scores=True)
    causal = np.tril(np.ones((query_length, 4), bool))
    scores = to_numpy(scores)
    assert (scores[0][~causal] == 0.0).all()
    expected, _ = reference.attention(query, key, value, causal[None])
    np.testing.assert_allclose(to_numpy(output), expected, atol=1e-5)
    np.testing.assert_allclose(to_numpy(layer(query, key, value)), expected, atol=1e-5)


@pytest.mark.parametrize("return_scores, fused", PATHS)
def test_use_causal_mask_per_call_is_the_causal_flag_for_one_call(return_scores, fused):
    query, key, value = random(2, 3, 4), random(2, 5, 4), random(2, 5, 4)
    per_call = ScaledDotProductAttention(use_fused_kernel=fused)
    always = ScaledDotProductAttention(causal=True, use_fused_kernel=fused)
    kwargs = {"return_attention_scores": return_scores}
    causal = np.tril(np.ones((3, 5), bool))
    expected, _ = reference.attention(query, key, value, causal[None])
    result = to_numpy(
        per_call(query, key, value, use_causal_mask=True, **kwargs)[0]
        if return_scores
        else per_call(query, key, value, use_causal_mask=True)
    )
    np.testing.assert_allclose(result, expected, atol=1e-5)
    always_result = always(query, key, value, **kwargs)
    np.testing.assert_allclose(
        to_numpy(always_result[0] if return_scores else always_result), result, atol=1e-6
    )
    unmasked = per_call(query, key, value, **kwargs)
    assert not np.allclose(to_numpy(unmasked[0] if return_scores else unmasked), result)


@pytest.mark.parametrize("mask_shape", [(2, 3, 5), (3, 5), (2, 2, 3, 5), (2, 1, 3, 5)])
def test_multi_head_masks_of_every_shape_broadcast_over_batch_and_heads(mask_shape):
    query, key, value = random(2, 3, 2, 4), random(2, 5, 2, 4), random(2, 5, 2, 4)
    mask = RNG.random(mask_shape) > 0.4
    mask[..., 0] = True
    full = np.broadcast_to(mask if len(mask_shape) == 4 else mask[..., None, :, :], (2, 2, 3, 5))
    _, scores = ScaledDotProductAttention()(
        query, key, value, attention_mask=mask, return_attention_scores=True
    )
    scores = to_numpy(scores)
    for head in range(2):
        expected, expected_scores = reference.attention(
            query[:, :, head], key[:, :, head], value[:, :, head], full[:, head]
        )
        np.testing.assert_allclose(scores[:, head], expected_scores, atol=1e-6)


@pytest.mark.parametrize(
    "query_shape, mask_shape",
    [((2, 3, 4), (2, 1, 3, 5)), ((2, 3, 2, 4), (2, 3, 3, 5)), ((2, 3, 2, 4), (5,))],
)
def test_other_mask_shapes_are_refused(query_shape, mask_shape):
    query = random(*query_shape)
    key = random(2, 5, *query_shape[2:])
    with pytest.raises(ValueError, match=r"Received: attention_mask.shape="):
        ScaledDotProductAttention()(query, key, key, attention_mask=np.ones(mask_shape, bool))


def test_dropout_is_active_in_training_only_and_inference_takes_the_fused_path(monkeypatch):
    query, key, value = random(2, 6, 8), random(2, 6, 8), random(2, 6, 8)
    plain = to_numpy(ScaledDotProductAttention()(query, key, value))
    layer = ScaledDotProductAttention(dropout=0.5, seed=1, use_fused_kernel=True)
    fused_calls = []
    original = ops.dot_product_attention

    def counting_dot_product_attention(*args, **kwargs):
        fused_calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(ops, "dot_product_attention", counting_dot_product_attention)
    np.testing.assert_allclose(to_numpy(layer(query, key, value, training=False)), plain, atol=1e-6)
    assert len(fused_calls) == 1
    dropped = to_numpy(layer(query, key, value, training=True))
    assert len(fused_calls) == 1, "dropout in training must use the explicit path"
    assert not np.allclose(dropped, plain, atol=1e-3)


def test_mixed_float16_large_logits_stay_finite():
    # Logits of about 4e4 overflow exp() in float16 and -1e9 is not a float16.
    query = np.full((1, 3, 16), 100.0, "float32")
    key = np.concatenate([np.full((1, 2, 16), 100.0), np.full((1, 2, 16), -100.0)], 1)
    key = key.astype("float32")
    value = random(1, 4, 16)
    mask = np.array([[[True, True, False, True]] * 2 + [[False] * 4]])
    layer = ScaledDotProductAttention(dtype="mixed_float16", use_fused_kernel=True)
    output, scores = layer(query, key, value, attention_mask=mask, return_attention_scores=True)
    fused = layer(query, key, value, attention_mask=mask)
    assert keras.backend.standardize_dtype(output.dtype) == "float16"
    assert keras.backend.standardize_dtype(scores.dtype) == "float32"
    for tensor in (output, scores, fused):
        assert np.isfinite(to_numpy(tensor)).all()
    scores = to_numpy(scores)
    np.testing.assert_allclose(scores[0, 0], [0.5, 0.5, 0.0, 0.0], atol=1e-3)
    np.testing.assert_array_equal(scores[0, 2], np.zeros(4))
    np.testing.assert_allclose(to_numpy(fused), to_numpy(output), atol=1e-2)


def test_fused_kernel_is_chosen_by_backend():
    fused_backends = ("jax", "torch")
    assert ScaledDotProductAttention()._use_fused_kernel == (
        keras.backend.backend() in fused_backends
    )
    assert ScaledDotProductAttention(use_fused_kernel=False)._use_fused_kernel is False


def test_config_round_trip():
    layer = ScaledDotProductAttention(
        causal=True, dropout=0.1, scale=0.5, seed=3, use_fused_kernel=True
    )
    check_config_round_trip(layer)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dropout": 1.5}, "Received: dropout=1.5"),
        ({"dropout": -0.1}, "Received: dropout=-0.1"),
        ({"scale": 0.0}, "Received: scale=0.0"),
    ],
)
def test_invalid_arguments_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ScaledDotProductAttention(**kwargs)
