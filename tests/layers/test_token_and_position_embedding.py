import os

import keras
import numpy as np
import pytest

from layers import SinusoidalPositionalEncoding, TokenAndPositionEmbedding
from tests.layers.layer_test_case import check_config_round_trip, to_numpy

TOKEN_IDS = np.array([[4, 9, 2, 0], [7, 0, 0, 0]])


def test_sinusoidal_output_is_token_embedding_plus_encoding_and_mask_marks_padding():
    layer = TokenAndPositionEmbedding(vocabulary_size=10, embedding_dim=6)
    output = to_numpy(layer(TOKEN_IDS))
    table = to_numpy(layer.token_embedding.embeddings)
    encoding = to_numpy(SinusoidalPositionalEncoding()(np.zeros((1, 4, 6), "float32")))
    np.testing.assert_allclose(output, table[TOKEN_IDS] + encoding, atol=1e-6)
    np.testing.assert_array_equal(to_numpy(layer.compute_mask(TOKEN_IDS)), TOKEN_IDS != 0)


def test_learned_positions_and_mask_propagation_in_a_model(tmp_path):
    tokens = keras.Input((None,), dtype="int32")
    embedded = TokenAndPositionEmbedding(
        vocabulary_size=10, embedding_dim=4, sequence_length=4, positional_encoding="learned"
    )(tokens)
    pooled = keras.layers.GlobalAveragePooling1D()(embedded)  # mask-aware mean
    model = keras.Model(tokens, pooled)
    layer = model.layers[1]
    expected = (
        to_numpy(layer.token_embedding.embeddings)[7]
        + to_numpy(layer.position_encoding.position_embeddings)[0]
    )
    np.testing.assert_allclose(model.predict(TOKEN_IDS, verbose=0)[1], expected, atol=1e-6)
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(
        reloaded.predict(TOKEN_IDS, verbose=0), model.predict(TOKEN_IDS, verbose=0), atol=1e-6
    )


def test_no_mask_without_mask_zero():
    layer = TokenAndPositionEmbedding(vocabulary_size=10, embedding_dim=4, mask_zero=False)
    assert layer.compute_mask(TOKEN_IDS) is None


def test_a_seeded_token_table_is_the_same_twice_and_the_config_keeps_the_seed():
    def build():
        layer = TokenAndPositionEmbedding(
            10, 4, embeddings_initializer=keras.initializers.RandomNormal(seed=5)
        )
        layer(TOKEN_IDS)
        return to_numpy(layer.token_embedding.embeddings), layer.get_config()

    (table, config), (again, _) = build(), build()
    np.testing.assert_array_equal(table, again)
    assert config["embeddings_initializer"]["config"]["seed"] == 5


def test_config_round_trip():
    check_config_round_trip(
        TokenAndPositionEmbedding(12, 8, sequence_length=5, positional_encoding="learned")
    )


def test_a_projection_widens_the_normalised_sum_and_round_trips():
    layer = TokenAndPositionEmbedding(
        12,
        4,
        sequence_length=5,
        positional_encoding="learned",
        layer_norm_epsilon=1e-12,
        num_token_types=2,
        projection_dim=6,
    )
    output = to_numpy(layer(TOKEN_IDS))
    assert output.shape == (2, 4, 6) and layer.compute_output_shape((2, 4)) == (2, 4, 6)
    summed = (
        to_numpy(layer.token_embedding.embeddings)[TOKEN_IDS]
        + to_numpy(layer.position_encoding.position_embeddings)[:4]
        + to_numpy(layer.token_type_embedding.embeddings)[0]
    )  # (B, T, 4)
    normed = (summed - summed.mean(-1, keepdims=True)) / summed.std(-1, keepdims=True)
    projection = layer.embedding_projection
    expected = normed @ to_numpy(projection.kernel) + to_numpy(projection.bias)
    np.testing.assert_allclose(output, expected, atol=1e-5)
    check_config_round_trip(layer)


def test_no_projection_by_default_costs_no_weights():
    layer = TokenAndPositionEmbedding(12, 4)
    layer.build((None, None))
    assert not hasattr(layer, "embedding_projection") and layer.count_params() == 12 * 4


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vocabulary_size": 0, "embedding_dim": 4}, "Received: vocabulary_size=0"),
        ({"vocabulary_size": 5, "embedding_dim": -4}, "Received: embedding_dim=-4"),
        (
            {"vocabulary_size": 5, "embedding_dim": 4, "positional_encoding": "rotary"},
            "Received: positional_encoding='rotary'",
        ),
        (
            {"vocabulary_size": 5, "embedding_dim": 4, "positional_encoding": "learned"},
            "Received: sequence_length=None",
        ),
        (
            {"vocabulary_size": 5, "embedding_dim": 4, "projection_dim": 0},
            "Received: projection_dim=0",
        ),
    ],
)
def test_invalid_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TokenAndPositionEmbedding(**kwargs)
