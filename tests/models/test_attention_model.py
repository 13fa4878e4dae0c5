import keras
import numpy as np
import pytest

from config import ModelConfig
from layers import TransformerEncoderBlock
from models import AttentionProbe, build_attention_model, build_classifier


def call(model, inputs):
    """Eager call: much faster than predict() for a handful of examples."""
    if isinstance(inputs, np.ndarray) and inputs.dtype == object:
        inputs = inputs.astype(str)
    return keras.tree.map_structure(np.asarray, model(inputs, training=False))

IDS = np.array([[5, 6, 7, 0, 0, 0], [9, 8, 7, 6, 5, 4]])


@pytest.mark.parametrize("pooling, length", [("mean", 6), ("cls", 7)])
def test_shares_weights_and_returns_every_blocks_scores(pooling, length):
    config = ModelConfig(d_model=16, num_heads=2, num_layers=3, intermediate_dim=32,
                         dropout=0.0, pooling=pooling)
    classifier = build_classifier(config, vocabulary_size=50, sequence_length=6, num_classes=3)
    attention_model = build_attention_model(classifier)
    outputs = call(attention_model, IDS)
    np.testing.assert_allclose(outputs["probabilities"], call(classifier, IDS),
                               rtol=1e-6, atol=1e-7)
    scores = outputs["attention_scores"]
    assert [s.shape for s in scores] == [(2, 2, length, length)] * 3
    assert all(s.dtype == np.float32 for s in scores)
    np.testing.assert_allclose(scores[0].sum(axis=-1)[1], 1.0, rtol=1e-5)
    # Padded keys get exactly zero weight (row 0 has 3 real tokens, + the class token).
    real = 3 + (pooling == "cls")
    assert np.all(scores[0][0, :, :real, real:] == 0.0)
    # Same variables, not copies: changing the classifier changes the sibling.
    assert {id(v) for v in attention_model.weights} == {id(v) for v in classifier.weights}


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_classifier_runs_the_fast_path_and_the_probes_the_scores_path(pooling):
    config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32,
                         dropout=0.0, pooling=pooling)
    classifier = build_classifier(config, vocabulary_size=50, sequence_length=6, num_classes=3)
    blocks = [layer for layer in classifier.layers
              if isinstance(layer, TransformerEncoderBlock)]
    assert len(blocks) == 2
    attention_model = build_attention_model(classifier)
    for block in blocks:
        # One call node per block, from the classifier, without scores and one output:
        # the probes call the blocks inside their own `call` and add no node.
        [node] = block._inbound_nodes
        assert "return_attention_scores" not in node.arguments.kwargs
        assert len(node.outputs) == 1
    probes = [layer for layer in attention_model.layers if isinstance(layer, AttentionProbe)]
    assert [probe.block for probe in probes] == blocks
    outputs = call(attention_model, IDS)
    probabilities = call(classifier, IDS)
    assert np.abs(outputs["probabilities"] - probabilities).max() < 1e-5
    assert len(outputs["attention_scores"]) == 2


def test_rejects_a_model_without_blocks():
    import keras

    inputs = keras.Input((4,))
    with pytest.raises(ValueError, match="no TransformerEncoderBlock"):
        build_attention_model(keras.Model(inputs, keras.layers.Dense(2)(inputs)))


def test_a_classifier_that_is_not_a_chain():
    # Two blocks side by side on the same embeddings, merged: no single chain of layers.
    from layers import SequencePooling, TokenAndPositionEmbedding

    token_ids = keras.Input((6,), dtype="int64")
    x = TokenAndPositionEmbedding(vocabulary_size=50, embedding_dim=16)(token_ids)
    left = TransformerEncoderBlock(num_heads=2, intermediate_dim=8, name="left")(x)
    right = TransformerEncoderBlock(num_heads=4, intermediate_dim=8, name="right")(x)
    pooled = SequencePooling("mean")(keras.layers.Add()([left, right]))
    probabilities = keras.layers.Dense(3, activation="softmax")(pooled)
    classifier = keras.Model(token_ids, probabilities, name="classifier")

    outputs = call(build_attention_model(classifier), IDS)
    np.testing.assert_allclose(outputs["probabilities"], call(classifier, IDS), rtol=1e-6,
                               atol=1e-7)
    assert sorted(s.shape for s in outputs["attention_scores"]) == [(2, 2, 6, 6), (2, 4, 6, 6)]


def test_local_attention_blocks_reach_the_exported_scores():
    config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32,
                         dropout=0.0, attention_block_size=4)
    classifier = build_classifier(config, vocabulary_size=50, sequence_length=6, num_classes=3)
    outputs = call(build_attention_model(classifier), IDS)
    np.testing.assert_allclose(outputs["probabilities"], call(classifier, IDS),
                               rtol=1e-6, atol=1e-7)
    for scores in outputs["attention_scores"]:
        assert scores.shape == (2, 2, 6, 6)
        # Tokens 0-3 and 4-5 are two blocks: no weight crosses between them.
        assert np.all(scores[:, :, :4, 4:] == 0.0) and np.all(scores[:, :, 4:, :4] == 0.0)
        np.testing.assert_allclose(scores[1].sum(axis=-1), 1.0, rtol=1e-5)
