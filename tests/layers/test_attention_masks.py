"""layers.attention_masks: each mask's values and layout, and their AND."""

import numpy as np
import pytest

from layers.attention_masks import (
    all_of,
    attention_mask_4d,
    causal_mask,
    key_padding_mask,
    key_side_mask,
    sliding_window_mask,
)


def test_causal_mask_lets_query_i_see_keys_up_to_i():
    np.testing.assert_array_equal(
        np.asarray(causal_mask(2, 3))[0, 0], [[True, False, False], [True, True, False]]
    )


def test_sliding_window_mask_is_the_band_of_width_window():
    band = np.asarray(sliding_window_mask(4, 4, 2))[0, 0]
    expected = np.abs(np.arange(4)[:, None] - np.arange(4)[None, :]) < 2
    np.testing.assert_array_equal(band, expected)
    assert band.sum() == 10  # 4 on the diagonal, 3 above and 3 below


def test_key_padding_mask_broadcasts_over_heads_and_queries():
    mask = np.asarray(key_padding_mask(np.array([[1, 1, 0]])))
    assert mask.shape == (1, 1, 1, 3) and mask.dtype == bool
    np.testing.assert_array_equal(mask[0, 0, 0], [True, True, False])


@pytest.mark.parametrize(
    "shape, expected",
    [
        ((3, 4), (1, 1, 3, 4)),
        ((2, 3, 4), (2, 1, 3, 4)),
        ((2, 5, 3, 4), (2, 5, 3, 4)),
        ((2, 1, 3, 4), (2, 1, 3, 4)),
    ],
)
def test_attention_mask_4d_takes_every_accepted_shape(shape, expected):
    assert tuple(attention_mask_4d(np.ones(shape, bool), 5, 3, 4).shape) == expected


def test_attention_mask_4d_names_the_accepted_shapes_and_the_received_one():
    expected = r"\(B, T, S\) or \(T, S\) .*Received: mask.shape=\(2, 3, 5\)"
    with pytest.raises(ValueError, match=expected):
        attention_mask_4d(np.ones((2, 3, 5), bool), None, 3, 4, name="mask")


def test_all_of_is_the_logical_and_and_none_without_masks():
    assert all_of([]) is None
    combined = np.asarray(all_of([causal_mask(3, 3), sliding_window_mask(3, 3, 2)]))[0, 0]
    np.testing.assert_array_equal(
        combined, [[True, False, False], [True, True, False], [False, True, True]]
    )


def test_key_side_mask_ands_padding_attention_mask_and_band():
    query, key = np.zeros((1, 3, 4)), np.zeros((1, 3, 4))
    assert key_side_mask(query, key, 2) is None
    padding = np.array([[1, 1, 0]])
    below_diagonal = np.tril(np.ones((3, 3), bool))  # (T, S)
    mask = np.asarray(
        key_side_mask(
            query,
            key,
            2,
            value_mask=padding,
            key_mask=padding,
            attention_mask=below_diagonal,
            sliding_window=2,
        )
    )
    assert mask.shape == (1, 1, 3, 3)
    np.testing.assert_array_equal(
        mask[0, 0], [[True, False, False], [True, True, False], [False, True, False]]
    )
