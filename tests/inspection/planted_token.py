"""A classifier whose answer is known: class 1 exactly when token 7 is in the text.

Trained in a few seconds on random token sequences; a faithful attribution must rank the
planted token first in the texts of class 1, and removing it must flip the prediction.
"""

import functools

import keras
import numpy as np

from config import ModelConfig
from models import build_classifier

PLANTED = 7
VOCABULARY_SIZE = 30
LENGTH = 8


def planted_texts(count, seed):
    """Token ids (count, LENGTH) of 3 to 8 tokens, and labels: 1 where token 7 is planted."""
    rng = np.random.default_rng(seed)
    others = [token for token in range(2, VOCABULARY_SIZE) if token != PLANTED]
    lengths = rng.integers(3, LENGTH + 1, count)
    token_ids = np.zeros((count, LENGTH), np.int64)
    for row, length in enumerate(lengths):
        token_ids[row, :length] = rng.choice(others, length)
    labels = rng.integers(0, 2, count)
    positions = np.array([rng.integers(0, length) for length in lengths])
    planted = labels == 1
    token_ids[planted, positions[planted]] = PLANTED
    return token_ids, labels


@functools.cache
def planted_token_classifier(pooling="mean"):
    """A 2-block classifier trained to 100% training accuracy on `planted_texts`."""
    keras.utils.set_random_seed(0)
    config = ModelConfig(
        d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, dropout=0.0, pooling=pooling
    )
    classifier = build_classifier(config, VOCABULARY_SIZE, sequence_length=LENGTH, num_classes=2)
    classifier.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    token_ids, labels = planted_texts(3000, seed=0)
    history = classifier.fit(token_ids, labels, epochs=4, batch_size=64, verbose=0)
    assert history.history["accuracy"][-1] > 0.99, history.history
    return classifier
