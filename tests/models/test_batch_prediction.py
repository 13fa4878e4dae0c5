"""predict_batches: one trace of the classifier for every batch length and dataset."""

import keras
import numpy as np
import tensorflow as tf

from config import ModelConfig
from models import build_classifier, predict_batches


def test_predict_batches_traces_the_classifier_once_for_every_batch_length(monkeypatch):
    classifier = build_classifier(
        ModelConfig(d_model=8, num_heads=2, intermediate_dim=8),
        vocabulary_size=20,
        sequence_length=8,
        num_classes=3,
    )
    rng = np.random.default_rng(0)
    # Batches of three lengths, as the length-bucketed pipelines give them, in two datasets.
    token_ids = [rng.integers(1, 20, size=(2, length)) for length in (3, 5, 8)]
    labels = [keras.utils.to_categorical(rng.integers(0, 3, 2), 3) for _ in token_ids]

    def dataset(indices):
        return tf.data.Dataset.from_generator(
            lambda: ((token_ids[i], labels[i]) for i in indices),
            output_signature=(
                tf.TensorSpec((None, None), tf.int64),
                tf.TensorSpec((None, 3), tf.float32),
            ),
        )

    pooling = classifier.pooling
    calls = []
    original = pooling.call
    # Python runs only while tracing: one call per trace.
    monkeypatch.setattr(
        pooling, "call", lambda *args, **kwargs: calls.append(1) or original(*args, **kwargs)
    )
    predictions = predict_batches(classifier, dataset([0, 1]), dataset([2]))
    assert len(calls) == 1
    expected = [np.asarray(classifier(ids, training=False)) for ids in token_ids]
    assert len(calls) == 4  # the counter sees each eager call
    for (probabilities, true_labels), indices in zip(predictions, ([0, 1], [2])):
        np.testing.assert_allclose(
            probabilities, np.concatenate([expected[i] for i in indices]), rtol=1e-5, atol=1e-6
        )
        np.testing.assert_array_equal(
            true_labels, np.concatenate([labels[i] for i in indices]).argmax(-1)
        )
