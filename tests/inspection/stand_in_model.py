"""A tiny real classifier for the inspection tests: the project's `TransformerClassifier`,
2 blocks of 2 heads, 8 wide, with its `TextVectorization` and end-to-end model.

Its one forward pass follows the contract `export_attention` relies on:
token ids (B, T) -> probabilities (B, C), and with `return_attention_scores=True`
{"probabilities", "logits", "attention_scores": [(B, N, A, A)] * layers}, where padded keys
get exactly zero weight.
"""

import keras
import numpy as np

from config import ModelConfig
from models import build_classifier, build_end_to_end_model

VOCABULARY = [
    "the",
    "film",
    "was",
    "not",
    "good",
    "bad",
    "great",
    "plot",
    "acting",
    "boring",
    "a",
    "and",
    "but",
    "it",
    "i",
    "loved",
    "hated",
    "story",
    "very",
    "at",
    "all",
]


def build_stand_in_models(
    vocabulary=VOCABULARY,
    sequence_length=12,
    num_classes=2,
    num_layers=2,
    num_heads=2,
    d_model=8,
    embedding_stddev=1.0,
    pooling="mean",
    seed=0,
):
    """Returns (end_to_end_model, classifier, vectorizer); the end-to-end model holds the
    very classifier and vectorizer returned.

    Example:
    >>> end_to_end, classifier, vectorizer = build_stand_in_models()
    """
    keras.utils.set_random_seed(seed)
    # Named as the end-to-end model names it, so it goes in as it is, not as a copy.
    vectorizer = keras.layers.TextVectorization(
        output_sequence_length=sequence_length,
        vocabulary=list(vocabulary),
        name="text_vectorization",
    )
    config = ModelConfig(
        d_model=d_model,
        num_heads=num_heads,
        num_layers=num_layers,
        intermediate_dim=2 * d_model,
        dropout=0.0,
        pooling=pooling,
    )
    classifier = build_classifier(
        config, vectorizer.vocabulary_size(), sequence_length, num_classes
    )
    # A wide initialisation gives peaked, easy to tell apart attention maps.
    table = classifier.encoder.embedding.token_embedding.embeddings  # (V, D)
    rng = np.random.default_rng(seed)
    table.assign(rng.normal(0.0, embedding_stddev, table.shape).astype("float32"))
    end_to_end = build_end_to_end_model(vectorizer, classifier)
    return end_to_end, classifier, vectorizer
