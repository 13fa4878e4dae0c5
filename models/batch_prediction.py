"""The classifier's probabilities over batches of token ids, outside `fit`."""

import numpy as np
import tensorflow as tf


def predict_batches(classifier, *datasets):
    """[(probabilities (N, C), labels (N,)) per dataset] of `classifier` over `datasets` of
    (token ids, one-hot labels) batches, all of the first one's element spec; a
    multi-label classifier's labels stay multi-hot (N, C).

    One trace for every batch length and dataset: `classifier.predict` traces its step
    again for new shapes until TensorFlow relaxes them, seconds on a test split batched
    by length."""
    predict = tf.function(
        lambda token_ids: classifier(token_ids, training=False),
        input_signature=[datasets[0].element_spec[0]],
    )
    results = []
    for batches in datasets:
        probabilities, labels = [], []
        for token_ids, label in batches:
            probabilities.append(predict(token_ids).numpy())
            labels.append(label.numpy() if classifier.multi_label else label.numpy().argmax(-1))
        results.append((np.concatenate(probabilities), np.concatenate(labels)))
    return results
