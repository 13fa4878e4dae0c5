"""A tiny classifier that follows the attention model contract of `export_attention`.

Stands in for the project's transformer so the inspection library is tested on its own:
token ids (B, L) -> {"probabilities": (B, C), "attention_scores": [(B, N, L, L)] * layers},
padded keys get exactly zero weight and padded query rows are all zero.
"""

import keras
from keras import ops

VOCABULARY = ["the", "film", "was", "not", "good", "bad", "great", "plot", "acting", "boring",
              "a", "and", "but", "it", "i", "loved", "hated", "story", "very", "at", "all"]


def build_stand_in_models(vocabulary=VOCABULARY, sequence_length=12, num_classes=2,
                          num_layers=2, num_heads=2, d_model=8, embedding_stddev=1.0, seed=0):
    """Returns (end_to_end_model, classifier, attention_model, vectorizer) sharing weights.

    Example:
    >>> end_to_end, classifier, attention_model, vectorizer = build_stand_in_models()
    """
    keras.utils.set_random_seed(seed)
    vectorizer = keras.layers.TextVectorization(
        output_sequence_length=sequence_length, vocabulary=list(vocabulary)
    )
    token_ids = keras.Input((sequence_length,), dtype="int32", name="token_ids")
    padding_mask = ops.not_equal(token_ids, 0)  # (B, L), True = real token
    # (B, T, S): a query attends to a key only when both are real tokens.
    attention_mask = ops.logical_and(padding_mask[:, :, None], padding_mask[:, None, :])
    query_mask = ops.cast(padding_mask, "float32")[:, None, :, None]  # (B, 1, T, 1)
    # A wide initialisation gives peaked, easy to tell apart attention maps.
    embedding = keras.layers.Embedding(
        len(vocabulary) + 2, d_model,
        embeddings_initializer=keras.initializers.RandomNormal(stddev=embedding_stddev),
    )
    hidden = embedding(token_ids)  # (B, L, D)
    attention_scores = []
    for _ in range(num_layers):
        attention = keras.layers.MultiHeadAttention(num_heads, key_dim=d_model // num_heads)
        output, scores = attention(hidden, hidden, attention_mask=attention_mask,
                                   return_attention_scores=True)  # (B, L, D), (B, N, T, S)
        # Fully masked rows come out uniform from the softmax; the contract wants zeros.
        attention_scores.append(scores * query_mask)
        hidden = hidden + output
    weights = ops.cast(padding_mask, "float32")[:, :, None]  # (B, L, 1)
    pooled = ops.sum(hidden * weights, axis=1) / ops.maximum(ops.sum(weights, axis=1), 1.0)
    probabilities = keras.layers.Dense(num_classes, activation="softmax")(pooled)  # (B, C)

    classifier = keras.Model(token_ids, probabilities, name="classifier")
    attention_model = keras.Model(
        token_ids, {"probabilities": probabilities, "attention_scores": attention_scores},
        name="attention_model",
    )
    texts = keras.Input((), dtype="string", name="text")
    end_to_end = keras.Model(texts, classifier(vectorizer(texts)), name="end_to_end")
    return end_to_end, classifier, attention_model, vectorizer
