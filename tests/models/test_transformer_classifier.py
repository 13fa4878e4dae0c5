"""The builder: config -> layer arguments, masking, and every config file builds."""

from pathlib import Path

import keras
import numpy as np
import pytest

from config import ModelConfig
from config.files import load_config
from layers import TokenAndPositionEmbedding, TransformerEncoderBlock
from models import build_classifier


def call(model, inputs):
    """Eager call: much faster than predict() for a handful of examples."""
    if isinstance(inputs, np.ndarray) and inputs.dtype == object:
        inputs = inputs.astype(str)
    return keras.tree.map_structure(np.asarray, model(inputs, training=False))


CONFIGS = sorted(Path(__file__).resolve().parents[2].joinpath("configs").glob("*.yaml"))
SMALL = dict(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, dropout=0.0)
# Printed from the functional classifier of commit 76c3550 (see the test that uses them).
LITERAL_QUERY_KERNEL = [[0.113272, -0.187494], [0.171813, -0.083903]]
LITERAL_HEAD_ROW = [-0.074317, 0.127517, -0.035877]


def test_maps_the_model_section_to_layer_arguments():
    config = ModelConfig(
        **SMALL,
        positional_encoding="learned",
        norm_first=False,
        attention_dropout=0.2,
        activation="gelu",
    )
    model = build_classifier(config, vocabulary_size=50, sequence_length=8, num_classes=3)
    embedding = model.encoder.embedding
    assert isinstance(embedding, TokenAndPositionEmbedding)
    assert (embedding.vocabulary_size, embedding.embedding_dim, embedding.sequence_length) == (
        50,
        16,
        8,
    )
    assert embedding.positional_encoding == "learned" and embedding.mask_zero
    blocks = model.encoder.blocks
    assert all(isinstance(block, TransformerEncoderBlock) for block in blocks)
    assert [block.name for block in blocks] == ["encoder_block_0", "encoder_block_1"]
    block_config = blocks[0].get_config()
    assert block_config["num_heads"] == 2 and block_config["key_dim"] == 8
    assert block_config["norm_first"] is False and block_config["activation"] == "gelu"
    assert block_config["attention_dropout"] == 0.2
    assert model.compute_output_spec(keras.KerasTensor((None, 8), "int64")).shape == (None, 3)


@pytest.mark.parametrize("pooling", ["mean", "max", "cls"])
def test_padding_does_not_change_predictions(pooling):
    # The same weights on the unpadded tokens (L=3) and on the padded sequence (L=8):
    # masked attention and pooling must make padding invisible. Sinusoidal positions
    # have no weights, so both lengths share every variable.
    config = ModelConfig(**SMALL, pooling=pooling, positional_encoding="sinusoidal")
    padded_model = build_classifier(config, vocabulary_size=50, sequence_length=8, num_classes=3)
    short_model = build_classifier(config, vocabulary_size=50, sequence_length=3, num_classes=3)
    short_model.set_weights(padded_model.get_weights())
    padded = call(padded_model, np.array([[5, 6, 7, 0, 0, 0, 0, 0]]))
    short = call(short_model, np.array([[5, 6, 7]]))
    np.testing.assert_allclose(padded, short, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(padded.sum(axis=-1), 1.0, rtol=1e-6)


def test_masked_tokens_get_no_attention_and_do_not_leak():
    config = ModelConfig(**SMALL)
    model = build_classifier(config, vocabulary_size=50, sequence_length=6, num_classes=2)
    a = np.array([[5, 6, 0, 0, 0, 0]])
    # With the mask, the result depends only on the real tokens: a batch-mate with more
    # tokens must not change it.
    batch = np.array([[5, 6, 0, 0, 0, 0], [9, 8, 7, 6, 5, 4]])
    np.testing.assert_allclose(call(model, a)[0], call(model, batch)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("path", CONFIGS, ids=[path.name for path in CONFIGS])
def test_every_config_file_builds_its_model(path):
    from tokenization.vectorizer import AUTO_BOUNDS

    config = load_config(path)
    length = config.text.sequence_length
    if length == "auto":  # resolved from the training texts, at most the upper bound
        length = AUTO_BOUNDS[1]
    model = build_classifier(config.model, config.text.vocabulary_size, length, num_classes=4)
    assert call(model, np.array([[5, 6, 0]])).shape == (1, 4)
    assert model.count_params() > 0


def test_mixed_precision_keeps_softmax_in_float32():
    config = ModelConfig(**SMALL)
    import keras

    keras.config.set_dtype_policy("mixed_float16")
    try:
        model = build_classifier(config, 50, 8, 3)
    finally:
        keras.config.set_dtype_policy("float32")
    probabilities = call(model, np.array([[5, 6, 7, 0, 0, 0, 0, 0]]))
    assert probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(), 1.0, rtol=1e-5)


def test_token_dropout_drops_words_in_training_only():
    config = ModelConfig(**SMALL, token_dropout=0.5)
    model = build_classifier(config, vocabulary_size=50, sequence_length=8, num_classes=3)
    plain = build_classifier(
        ModelConfig(**SMALL), vocabulary_size=50, sequence_length=8, num_classes=3
    )
    plain.set_weights(model.get_weights())  # the dropout layer adds no weights
    token_ids = np.array([[5, 6, 7, 8, 9, 10, 11, 0]] * 4)
    np.testing.assert_allclose(call(model, token_ids), call(plain, token_ids), rtol=1e-6)
    # In training each row loses its own words, so identical rows differ; the ids that
    # reach the embedding are a subset of the text's, padding included.
    trained = np.asarray(model(token_ids, training=True))
    assert not np.allclose(trained, trained[:1])
    dropped = np.asarray(model.token_dropout(token_ids, training=True))
    assert ((dropped == token_ids) | (dropped == 0)).all() and (dropped == 0).any()
    assert plain.token_dropout is None


def test_the_same_seed_gives_the_weights_of_the_functional_classifier_it_replaces():
    # Literal weights of the functional classifier (before 2026-12) built after
    # set_random_seed(0): every layer draws its seeds in the same order as it did. Since
    # the projections are EinsumDense layers, Glorot counts the fans as Keras' attention
    # does (D in, N * H out: 16 and 16) rather than as for a 3-D kernel (32 and 128), so
    # the same draws come out sqrt(160 / 32) = sqrt(5) times larger.
    keras.utils.set_random_seed(0)
    model = build_classifier(ModelConfig(**SMALL), 50, sequence_length=8, num_classes=3)
    kernel = model.encoder.blocks[1].self_attention.query_dense.kernel.numpy()
    np.testing.assert_allclose(
        kernel[0, :, :2], np.sqrt(5) * np.array(LITERAL_QUERY_KERNEL), atol=1e-5
    )
    np.testing.assert_allclose(model.head.kernel.numpy()[0], LITERAL_HEAD_ROW, atol=1e-6)


@pytest.mark.parametrize(
    "options",
    [{}, {"pooling": "cls", "head_hidden_dim": 4}, {"norm_first": False, "token_dropout": 0.1}],
)
def test_saves_and_reloads_in_safe_mode_alone(tmp_path, options):
    model = build_classifier(ModelConfig(**{**SMALL, **options}), 50, 8, num_classes=3)
    model.save(tmp_path / "classifier.keras")
    loaded = keras.saving.load_model(tmp_path / "classifier.keras", safe_mode=True)
    ids = np.array([[5, 6, 7, 0], [9, 8, 0, 0]])
    np.testing.assert_array_equal(call(loaded, ids), call(model, ids))
    assert type(loaded).__name__ == "TransformerClassifier"
    assert loaded.get_config() == model.get_config()
