import numpy as np
import pytest

from layers import TokenDropout
from tests.layers.layer_test_case import to_numpy

# 200 texts of 50 ids, the last 10 positions of every text padding.
TOKEN_IDS = np.random.default_rng(0).integers(1, 1000, size=(200, 50))
TOKEN_IDS[:, 40:] = 0


def test_training_drops_the_rate_of_real_tokens_to_padding_and_keeps_the_others():
    dropped = to_numpy(TokenDropout(0.3, seed=1)(TOKEN_IDS, training=True))
    real = TOKEN_IDS != 0
    assert (dropped[~real] == 0).all()  # padding stays padding
    kept = dropped != 0
    np.testing.assert_array_equal(dropped[kept], TOKEN_IDS[kept])  # kept ids unchanged
    # 8,000 real tokens: the dropped share is 0.3 within 4 standard deviations (0.02).
    assert abs(1 - kept[real].mean() - 0.3) < 0.02
    # Each text loses its own words, not the same positions.
    assert len({tuple(row) for row in kept[:, :40]}) == len(kept)


def test_inference_and_rate_zero_pass_the_ids_through():
    np.testing.assert_array_equal(to_numpy(TokenDropout(0.5)(TOKEN_IDS)), TOKEN_IDS)
    np.testing.assert_array_equal(to_numpy(TokenDropout(0.0)(TOKEN_IDS, training=True)), TOKEN_IDS)


def test_the_same_seed_drops_the_same_tokens_and_each_call_draws_anew():
    first, second = TokenDropout(0.5, seed=7), TokenDropout(0.5, seed=7)
    once = to_numpy(first(TOKEN_IDS, training=True))
    np.testing.assert_array_equal(once, to_numpy(second(TOKEN_IDS, training=True)))
    assert (once != to_numpy(first(TOKEN_IDS, training=True))).any()


@pytest.mark.parametrize("rate", [-0.1, 1.0])
def test_rejects_a_rate_outside_zero_to_one(rate):
    with pytest.raises(ValueError, match=rf"`rate` must be in \[0, 1\). Received: rate={rate}"):
        TokenDropout(rate)
