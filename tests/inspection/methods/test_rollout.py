import numpy as np
import pytest

from inspection.methods.rollout import (
    attention_rollout,
    head_average,
    rollout_importance,
    token_importance,
)

# Two layers, two heads, two tokens. By hand:
#   layer 1 heads mean [[.75, .25], [.25, .75]] -> 0.5 A + 0.5 I = [[.875, .125], [.125, .875]]
#   layer 2 heads mean [[1, 0], [.5, .5]]       -> 0.5 A + 0.5 I = [[1, 0], [.25, .75]]
#   rollout = layer 2 @ layer 1 = [[.875, .125], [.3125, .6875]]
TWO_LAYER_SCORES = np.array(
    [
        [[[1.0, 0.0], [0.5, 0.5]], [[0.5, 0.5], [0.0, 1.0]]],
        [[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]],
    ]
)  # (layers=2, heads=2, T=2, T=2)
EXPECTED_ROLLOUT = [[0.875, 0.125], [0.3125, 0.6875]]


def test_two_layer_rollout_matches_hand_computation():
    np.testing.assert_allclose(attention_rollout(TWO_LAYER_SCORES), EXPECTED_ROLLOUT)


def test_a_pruned_models_removed_heads_stay_out_of_the_averages():
    # A third head in each layer, removed by pruning: its maps are all 0 in an export.
    pruned = np.concatenate([TWO_LAYER_SCORES, np.zeros((2, 1, 2, 2))], axis=1)  # (2, 3, 2, 2)
    np.testing.assert_allclose(
        head_average(pruned), [[[0.75, 0.25], [0.25, 0.75]], [[1.0, 0.0], [0.5, 0.5]]]
    )
    np.testing.assert_allclose(attention_rollout(pruned), EXPECTED_ROLLOUT)
    # Layer 2 keeping its first head only: [[1, 0], [1, 0]] -> rows [[1, 0], [.5, .5]] after
    # the residual, so rollout = that @ layer 1 = [[.875, .125], [.5, .5]].
    pruned[1, 1] = 0.0
    np.testing.assert_allclose(attention_rollout(pruned), [[0.875, 0.125], [0.5, 0.5]])


def test_importance_averages_query_rows_and_sums_to_one():
    importance = rollout_importance(attention_rollout(TWO_LAYER_SCORES))
    np.testing.assert_allclose(importance, [0.59375, 0.40625])
    assert importance.sum() == pytest.approx(1.0)


def test_class_token_importance_reads_row_zero():
    np.testing.assert_allclose(token_importance(TWO_LAYER_SCORES, pooling="cls"), [0.875, 0.125])
    np.testing.assert_allclose(
        token_importance(TWO_LAYER_SCORES, pooling="mean"), [0.59375, 0.40625]
    )


def test_padding_mask_drops_padded_positions():
    padded = np.zeros((2, 2, 3, 3))
    padded[:, :, :2, :2] = TWO_LAYER_SCORES  # third position padded: zero row and column
    rollout = attention_rollout(padded, padding_mask=[True, True, False])
    np.testing.assert_allclose(rollout, EXPECTED_ROLLOUT)


def test_rows_are_renormalised_after_adding_identity():
    unnormalised = np.array([[[[2.0, 0.0], [0.0, 2.0]]]])  # rows sum to 2
    # 0.5 * 2 + 0.5 = 1.5 on the diagonal, renormalised to 1.
    np.testing.assert_allclose(attention_rollout(unnormalised), np.eye(2))


def test_random_rollout_rows_sum_to_one():
    rng = np.random.default_rng(0)
    scores = rng.random((3, 4, 7, 7))
    scores /= scores.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(attention_rollout(scores).sum(axis=-1), np.ones(7))


def test_no_tokens_gives_empty_importance():
    assert token_importance(np.zeros((2, 2, 0, 0))).shape == (0,)


def test_wrong_rank_is_rejected():
    with pytest.raises(ValueError, match="Received: shape=\\(2, 2\\)"):
        attention_rollout(np.eye(2))


def test_wrong_padding_mask_length_is_rejected():
    with pytest.raises(ValueError, match="padding_mask must have shape \\(2,\\)"):
        attention_rollout(TWO_LAYER_SCORES, padding_mask=[True])


def test_unknown_pooling_is_rejected():
    with pytest.raises(ValueError, match="pooling='first'"):
        token_importance(TWO_LAYER_SCORES, pooling="first")
