"""The layers work in Sequential and subclassed models, not only in Functional ones."""

import os

import keras
import numpy as np

from layers import (
    FeedForward,
    MultiHeadAttention,
    TokenAndPositionEmbedding,
    TransformerEncoderBlock,
)
from tests.layers.layer_test_case import to_numpy

TOKEN_IDS = np.array([[3, 8, 2, 0, 0], [5, 1, 9, 4, 0]])


def test_sequential_model_trains_saves_and_reloads(tmp_path):
    model = keras.Sequential(
        [
            keras.Input((None,), dtype="int32"),
            TokenAndPositionEmbedding(vocabulary_size=10, embedding_dim=8),
            TransformerEncoderBlock(num_heads=2, intermediate_dim=16),
            FeedForward(intermediate_dim=16),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(2, activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(TOKEN_IDS, np.array([0, 1]), epochs=1, verbose=0)
    path = os.path.join(tmp_path, "sequential.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(
        reloaded.predict(TOKEN_IDS, verbose=0), model.predict(TOKEN_IDS, verbose=0), atol=1e-6
    )


class CrossAttentionClassifier(keras.Model):
    """Queries from one sequence attend to another; both padded with id 0."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embedding = TokenAndPositionEmbedding(vocabulary_size=10, embedding_dim=8)
        self.attention = MultiHeadAttention(num_heads=2)
        self.pooling = keras.layers.GlobalAveragePooling1D()
        self.classifier = keras.layers.Dense(2)

    def call(self, inputs):
        queries, keys = self.embedding(inputs[0]), self.embedding(inputs[1])
        attended, scores = self.attention(queries, keys, return_attention_scores=True)
        return self.classifier(self.pooling(attended)), scores


def test_subclassed_model_uses_the_keras_masks_of_both_sequences():
    model = CrossAttentionClassifier()
    keys = np.array([[7, 7, 7, 0, 0, 0], [2, 3, 0, 0, 0, 0]])
    logits, scores = model((TOKEN_IDS, keys))
    assert tuple(logits.shape) == (2, 2) and tuple(scores.shape) == (2, 2, 5, 6)
    scores = to_numpy(scores)
    assert (scores[0, :, :, 3:] == 0.0).all() and (scores[1, :, :, 2:] == 0.0).all()
    assert (scores[0, :, 3:] == 0.0).all()  # padded queries attend nothing
    np.testing.assert_allclose(scores[1, :, :4].sum(-1), 1.0, atol=1e-6)
