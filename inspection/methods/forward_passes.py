"""The classifier's forward passes that the attribution methods and the dataset measures
run thousands of times: its probabilities, its attention maps, and any function of it as
one TensorFlow graph per classifier (`compiled`).

Letter legend: B batch, T token ids, C classes.
"""

import weakref
from inspect import signature

import keras
import numpy as np
import tensorflow as tf

from inspection.attention_tokens import shortest_first, trimmed_to_longest

# Rows per forward or backward pass: 32 interpolation steps of one text for Integrated
# Gradients; MiniLM's backward pass at 128 tokens holds about 1 GB for 32 rows.
BATCH_SIZE = 32


def probabilities(classifier, token_ids, batch_size=BATCH_SIZE, head_mask=None):
    """The classifier's class probabilities, float64 (R, C), for token ids (R, T); with a
    `head_mask` (L, N), those of the heads it keeps."""
    token_ids = np.asarray(token_ids, dtype=np.int64)  # the graph's one signature
    forward = (
        _inference(classifier)
        if head_mask is None
        else (lambda ids: classifier(ids, training=False, head_mask=head_mask))
    )
    # In order of length, each batch cut to its longest row: short rows do not pay for the
    # padding of long ones. The probabilities do not depend on the batch a row is in.
    order = shortest_first(token_ids)
    result = np.zeros((len(token_ids), 0))
    for start in range(0, len(token_ids), batch_size):
        rows = order[start : start + batch_size]
        batch = keras.ops.convert_to_numpy(forward(trimmed_to_longest(token_ids[rows])))
        if not start:
            result = np.zeros((len(token_ids), batch.shape[-1]))
        result[rows] = batch
    return result


_GRAPHS = weakref.WeakKeyDictionary()


def compiled(classifier, name, function):
    """`function(classifier, token_ids, *more)` as one TensorFlow graph per classifier for
    every batch shape (token ids int64 (B, T), more int64 (B,)): the dataset measures run
    thousands of passes a third faster than eagerly, and the live lab (serve.py) answers a
    text in tens of milliseconds instead of a few hundred. Other backends, and stand-ins
    that are no Keras model, run eagerly. A model changed in place afterwards (quantized)
    needs a new classifier object."""
    if keras.backend.backend() != "tensorflow" or not isinstance(classifier, keras.Model):
        return lambda *tensors: function(classifier, *tensors)
    functions = _GRAPHS.setdefault(classifier, {})
    if name not in functions:
        model = weakref.ref(classifier)  # the cache must not keep its key alive
        arguments = signature(function).parameters
        specs = [tf.TensorSpec((None, None), tf.int64)] + [tf.TensorSpec((None,), tf.int64)] * (
            len(arguments) - 2
        )
        functions[name] = tf.function(
            lambda *tensors: function(model(), *tensors), input_signature=specs, autograph=False
        )
    return functions[name]


def _inference(classifier):
    """The classifier in inference: token ids (B, T) -> probabilities (B, C)."""
    return compiled(classifier, "inference", lambda model, ids: model(ids, training=False))


def attention_forward(classifier, token_ids):
    """One inference pass that also returns every block's maps: {"probabilities": (B, C),
    "attention_scores": [(B, N_l, T, T) per block]}, as tensors."""
    return compiled(
        classifier,
        "attention",
        lambda model, ids: model(ids, training=False, return_attention_scores=True),
    )(keras.ops.convert_to_tensor(np.asarray(token_ids), "int64"))


def predicted_classes(classifier, token_ids, batch_size=BATCH_SIZE):
    """The classifier's predicted class per text, int64 (B,)."""
    return probabilities(classifier, token_ids, batch_size).argmax(axis=-1)


def class_probabilities(classifier, token_ids, classes, batch_size=BATCH_SIZE):
    """Each row's probability of its class, float64 (R,): token ids (R, T), classes (R,)."""
    if len(token_ids) == 0:
        return np.zeros((0,))
    picked = probabilities(classifier, token_ids, batch_size)
    return picked[np.arange(len(picked)), np.asarray(classes)]


__all__ = [
    "BATCH_SIZE",
    "attention_forward",
    "class_probabilities",
    "compiled",
    "predicted_classes",
    "probabilities",
]
