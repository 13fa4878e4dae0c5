import keras
import numpy as np
import pytest

from keras_attention_lab.config import ModelConfig
from keras_attention_lab.models import build_attention_model, build_classifier


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


def test_rejects_a_model_without_blocks():
    import keras

    inputs = keras.Input((4,))
    with pytest.raises(ValueError, match="no TransformerEncoderBlock"):
        build_attention_model(keras.Model(inputs, keras.layers.Dense(2)(inputs)))
