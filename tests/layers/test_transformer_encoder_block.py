import keras
import numpy as np
import pytest

from layers import TokenAndPositionEmbedding, TransformerEncoderBlock
from tests.layers import reference
from tests.layers.layer_test_case import (
    assert_pairwise_different,
    assert_same_weights,
    to_numpy,
)

RNG = np.random.default_rng(0)


def numpy_block(block, x, mask):
    """Float64 forward pass of a block from its own weights (inference)."""
    weights = block.self_attention.get_weights()
    attention_mask = mask[:, :, None] & mask[:, None, :]
    w1, b1, w2, b2 = (np.asarray(w, np.float64) for w in block.feed_forward.get_weights())
    gamma1, beta1 = block.attention_norm.get_weights()
    gamma2, beta2 = block.feed_forward_norm.get_weights()
    epsilon = block.layer_norm_epsilon

    def feed_forward(h):
        return np.maximum(h @ w1 + b1, 0.0) @ w2 + b2

    if block.norm_first:
        normed = reference.layer_norm(x, gamma1, beta1, epsilon)
        h = x + reference.multi_head_attention(normed, normed, weights, attention_mask)[0]
        return h + feed_forward(reference.layer_norm(h, gamma2, beta2, epsilon))
    h = reference.layer_norm(
        x + reference.multi_head_attention(x, x, weights, attention_mask)[0], gamma1, beta1, epsilon
    )
    return reference.layer_norm(h + feed_forward(h), gamma2, beta2, epsilon)


@pytest.mark.parametrize("norm_first", [False, True])
def test_matches_float64_reference(norm_first):
    x = RNG.normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, norm_first=norm_first)
    output = to_numpy(block(x, padding_mask=mask))
    expected = numpy_block(block, x.astype(np.float64), mask)
    np.testing.assert_allclose(output[mask], expected[mask], atol=1e-4)


def test_real_tokens_ignore_what_the_padding_contains():
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, dropout=0.2)
    x = RNG.normal(size=(1, 6, 8)).astype("float32")
    noisy = x.copy()
    noisy[:, 4:] = RNG.normal(size=(1, 2, 8)) * 100
    mask = np.array([[1, 1, 1, 1, 0, 0]], bool)
    clean_output, scores = block(x, padding_mask=mask, return_attention_scores=True)
    noisy_output = block(noisy, padding_mask=mask)
    np.testing.assert_allclose(
        to_numpy(clean_output)[:, :4], to_numpy(noisy_output)[:, :4], atol=1e-5
    )
    assert tuple(scores.shape) == (1, 2, 6, 6)
    assert (to_numpy(scores)[..., 4:] == 0.0).all()


def test_keras_mask_is_used_and_passed_on_through_a_stack(tmp_path):
    tokens = keras.Input((None,), dtype="int32")
    x = TokenAndPositionEmbedding(vocabulary_size=20, embedding_dim=8)(tokens)
    x = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)(x)
    x, scores = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, norm_first=True)(
        x, return_attention_scores=True
    )
    model = keras.Model(tokens, scores)
    scores = model.predict(np.array([[5, 6, 7, 0, 0]]), verbose=0)
    assert (scores[0, :, :3, 3:] == 0.0).all()
    np.testing.assert_allclose(scores[0, :, :3].sum(-1), 1.0, atol=1e-6)


def test_explicit_and_keras_padding_masks_are_combined_with_and():
    block = TransformerEncoderBlock(num_heads=1, intermediate_dim=4)
    x = RNG.normal(size=(1, 4, 4)).astype("float32")
    keras_mask = np.array([[True, True, True, False]])
    explicit = np.array([[True, False, True, True]])
    _, scores = block(x, padding_mask=explicit, mask=keras_mask, return_attention_scores=True)
    row = to_numpy(scores)[0, 0, 0]
    assert row[1] == 0.0 and row[3] == 0.0
    np.testing.assert_allclose(row[[0, 2]].sum(), 1.0, atol=1e-6)


def test_use_causal_mask_makes_a_decoder_block_whose_tokens_ignore_the_future():
    x = RNG.normal(size=(2, 5, 8)).astype("float32")
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    outputs, scores = block(x, use_causal_mask=True, return_attention_scores=True)
    assert (to_numpy(scores)[..., np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] == 0).all()
    changed_future = x.copy()
    changed_future[:, 3:] += 1.0
    again = to_numpy(block(changed_future, use_causal_mask=True))
    np.testing.assert_allclose(again[:, :3], to_numpy(outputs)[:, :3], atol=1e-6)
    assert not np.allclose(to_numpy(block(changed_future))[:, :3], to_numpy(block(x))[:, :3])


@pytest.mark.skipif(
    keras.backend.backend() == "jax",
    reason="JAX on CPU has no float16 matmul with float32 accumulation (F16_F16_F32)",
)
def test_mixed_precision_training_step_has_finite_gradients():
    keras.config.set_dtype_policy("mixed_float16")
    try:
        tokens = keras.Input((None,), dtype="int32")
        x = TokenAndPositionEmbedding(vocabulary_size=20, embedding_dim=8)(tokens)
        x = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)(x)
        pooled = keras.layers.GlobalAveragePooling1D()(x)
        outputs = keras.layers.Dense(2, activation="softmax", dtype="float32")(pooled)
        model = keras.Model(tokens, outputs)
    finally:
        keras.config.set_dtype_policy("float32")
    token_ids = RNG.integers(0, 20, size=(4, 6))
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    history = model.fit(token_ids, np.array([0, 1, 0, 1]), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert all(np.isfinite(to_numpy(w)).all() for w in model.weights)


def seeded_block():
    # D = 4, N = 2, H = 2, intermediate_dim = 4: all six kernels hold 16 values.
    block = TransformerEncoderBlock(
        num_heads=2, intermediate_dim=4, kernel_initializer=keras.initializers.GlorotUniform(seed=1)
    )
    block(np.ones((1, 3, 4), "float32"))
    return block


def test_every_kernel_of_a_seeded_block_starts_different():
    block = seeded_block()
    attention, feed_forward = block.self_attention, block.feed_forward
    assert_pairwise_different(
        {
            "query": attention.query_dense.kernel,
            "key": attention.key_dense.kernel,
            "value": attention.value_dense.kernel,
            "output": attention.output_dense.kernel,
            "intermediate_dense": feed_forward.intermediate_dense.kernel,
            "output_dense": feed_forward.output_dense.kernel,
        }
    )


def test_one_seeded_config_gives_the_same_weights_twice():
    block = seeded_block()
    assert_same_weights(block, seeded_block())
    assert block.get_config()["kernel_initializer"]["config"]["seed"] == 1


def test_each_dropout_attribute_is_set_by_the_argument_it_is_named_after():
    block = TransformerEncoderBlock(
        num_heads=2, intermediate_dim=4, dropout=0.1, attention_dropout=0.3
    )
    assert block.self_attention.dropout == 0.3  # on the attention weights
    assert block.attention_output_dropout_layer.rate == 0.1  # residual branches
    assert block.feed_forward_output_dropout_layer.rate == 0.1
    assert block.feed_forward.dropout == 0.1


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_heads": 0, "intermediate_dim": 4}, "Received: num_heads=0"),
        ({"num_heads": 2, "intermediate_dim": 0}, "Received: intermediate_dim=0"),
        ({"num_heads": 2, "intermediate_dim": 4, "dropout": 1.2}, "Received: dropout=1.2"),
        (
            {"num_heads": 2, "intermediate_dim": 4, "attention_dropout": -1.0},
            "Received: attention_dropout=-1.0",
        ),
        (
            {"num_heads": 2, "intermediate_dim": 4, "layer_norm_epsilon": 0},
            "Received: layer_norm_epsilon=0",
        ),
        (
            {"num_heads": 2, "intermediate_dim": 4, "attention_block_size": 0},
            "Received: attention_block_size=0",
        ),
    ],
)
def test_invalid_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerEncoderBlock(**kwargs)


def block_diagonal(length, block_size):
    block = np.arange(length) // block_size
    return block[:, None] == block[None, :]  # (T, T)


@pytest.mark.parametrize("norm_first, causal", [(False, False), (True, False), (True, True)])
def test_attention_in_blocks_is_full_attention_with_a_block_diagonal_mask(norm_first, causal):
    # 11 tokens in blocks of 4: the last block is part filler; row 2 has one block of
    # real tokens only, so its other blocks are padding throughout.
    x = RNG.normal(size=(3, 11, 8)).astype("float32")
    mask = np.ones((3, 11), bool)
    mask[1, 7:] = False
    mask[2, 3:] = False
    full = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, norm_first=norm_first)
    blocks = TransformerEncoderBlock.from_config(
        {**full.get_config(), "attention_block_size": 4, "name": "blocks"}
    )
    full.build(x.shape)
    blocks.build(x.shape)
    blocks.set_weights(full.get_weights())
    expected, expected_scores = full(
        x,
        padding_mask=mask,
        attention_mask=np.broadcast_to(block_diagonal(11, 4), (3, 11, 11)),
        use_causal_mask=causal,
        return_attention_scores=True,
    )
    output, scores = blocks(
        x, padding_mask=mask, use_causal_mask=causal, return_attention_scores=True
    )
    assert tuple(scores.shape) == (3, 2, 11, 11)
    np.testing.assert_allclose(to_numpy(output), to_numpy(expected), atol=1e-6)
    np.testing.assert_allclose(to_numpy(scores), to_numpy(expected_scores), atol=1e-7)
    assert np.all(to_numpy(scores)[:, :, :4, 4:] == 0.0)  # nothing across blocks
    # The fast path (no scores) gives the same output.
    np.testing.assert_allclose(
        to_numpy(blocks(x, padding_mask=mask, use_causal_mask=causal)), to_numpy(output), atol=1e-6
    )
    # Full attention without the block mask differs: the blocks do cut attention.
    assert not np.allclose(to_numpy(full(x, padding_mask=mask)), to_numpy(output), atol=1e-3)


def test_attention_in_blocks_without_a_padding_mask_attends_every_real_token():
    x = RNG.normal(size=(2, 6, 8)).astype("float32")
    blocks = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, attention_block_size=4)
    _, scores = blocks(x, return_attention_scores=True)
    scores = to_numpy(scores)
    # Blocks [0..3] and [4, 5]: the filler after token 5 gets no weight.
    np.testing.assert_allclose(scores.sum(axis=-1), 1.0, rtol=1e-5)
    assert np.all(scores[:, :, 4:, 4:6] > 0.0) and np.all(scores[:, :, 4:, :4] == 0.0)


def test_attention_in_blocks_refuses_an_attention_mask():
    blocks = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, attention_block_size=2)
    with pytest.raises(ValueError, match="cannot be combined with `attention_block_size`"):
        blocks(np.ones((1, 4, 8), "float32"), attention_mask=np.ones((4, 4), bool))
