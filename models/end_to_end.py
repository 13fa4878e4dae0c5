"""The saved model: raw strings in, class probabilities out."""

from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from config import earlier_version_message
from models.transformer_classifier import TransformerClassifier
from models.trim_padding import TrimPadding
from models.upgrade import OutdatedFileError, is_old_functional_classifier, is_old_model_file

# The names the saved model's layers carry (read by people; code finds them by type).
VECTORIZER = "text_vectorization"
CLASSIFIER = "classifier"


def build_end_to_end_model(vectorizer, classifier, name="text_classifier", trim_padding=True):
    """Puts the adapted `TextVectorization` in front of the classifier.

    Args:
        vectorizer: an adapted `keras.layers.TextVectorization` (int output, pad id 0).
        classifier: the trained `TransformerClassifier` of `build_classifier`.
        name: model name.
        trim_padding: cut each batch to its longest text (`TrimPadding`). Only for a
            classifier that masks padding (`mask_zero`); one that sees padding must get
            texts padded to the cap, as in training.

    Returns:
        A `keras.Model` mapping strings `(B,)` to probabilities `(B, C)`, whose layers
        are named "text_vectorization" and "classifier" (`get_model_parts` gives them
        back). It is what `train.py` saves as `model.keras`.

    Example:

    >>> import numpy as np
    >>> from config import ModelConfig
    >>> from models import build_classifier
    >>> vectorizer = keras.layers.TextVectorization(max_tokens=50, output_sequence_length=8)
    >>> vectorizer.adapt(["a good film", "a bad film"])
    >>> config = ModelConfig(d_model=16, num_heads=2, num_layers=1, intermediate_dim=32)
    >>> classifier = build_classifier(config, 50, sequence_length=8, num_classes=2)
    >>> model = build_end_to_end_model(vectorizer, classifier)
    >>> model.predict(np.array(["good film"], dtype=object), verbose=0).shape
    (1, 2)
    """
    if vectorizer.name != VECTORIZER:
        # The name is part of the saved-model contract; copy the adapted layer under it.
        # Serialised, not get_config(): a custom `standardize` function must be named.
        serialized = keras.saving.serialize_keras_object(vectorizer)
        serialized["config"].update(name=VECTORIZER, vocabulary=None)
        renamed = keras.saving.deserialize_keras_object(serialized)
        renamed.set_vocabulary(vectorizer.get_vocabulary())
        vectorizer = renamed
    if not isinstance(classifier, TransformerClassifier):
        raise ValueError(
            "`classifier` must be a TransformerClassifier (build_classifier). "
            f"Received: {type(classifier).__name__}"
        )
    text = keras.Input(shape=(), dtype="string", name="text")
    token_ids = vectorizer(text)  # (B, cap): padded to the sequence length cap
    if trim_padding:
        token_ids = TrimPadding(name="trim_padding")(token_ids)  # (B, T): the longest text
    probabilities = classifier(token_ids)  # (B, C)
    return _with_lookups_built(keras.Model(text, probabilities, name=name))


def _with_lookups_built(model):
    """`model`, its text vectorizer's vocabulary lookup marked built: TextVectorization
    never builds it (its `build` is empty), and `Model.quantize` refuses unbuilt layers."""
    for layer in model.layers[1]._flatten_layers(include_self=False):
        if not layer.built:
            layer.build(None)
    return model


def load_end_to_end_model(path):
    """Loads a saved `model.keras` in safe mode.

    Keras finds custom classes through its registry, filled when their modules are
    imported; this module's package imports them all (`import models`).

    Raises:
        OutdatedFileError: the file was saved by an earlier version of this project (before
            the classifier was one class, or before the attention's projections were
            `EinsumDense` sublayers); the message names `upgrade_run.py`, which rewrites it.

    Example:

    >>> # model = load_end_to_end_model("runs/default/model.keras")
    >>> # vectorizer, classifier = get_model_parts(model)
    """
    outdated = OutdatedFileError(earlier_version_message(path, Path(path).parent))
    try:
        model = keras.saving.load_model(path, safe_mode=True)
    except ValueError:
        if is_old_model_file(path):
            raise outdated from None
        raise
    if is_old_functional_classifier(model):
        raise outdated
    return _with_lookups_built(model)


def saved_and_reloaded(model, path, texts):
    """Saves the end-to-end `model` to `path` and loads it back (`load_end_to_end_model`):
    (the model's probabilities of `texts`, the reloaded file's), for the check that a
    file is written as the model predicts before it replaces a run's model.keras.
    """
    model.save(path)
    texts = tf.constant(np.asarray(texts).astype(str))
    expected = np.asarray(model(texts, training=False))
    return expected, np.asarray(load_end_to_end_model(path)(texts, training=False))


def get_model_parts(model):
    """Returns `(vectorizer, classifier)` from an end-to-end model, e.g. a loaded `model.keras`:
    the layer that reads the text, and the `TransformerClassifier`.

    Raises:
        ValueError: when `model` is not an end-to-end model from `build_end_to_end_model`.
    """
    classifiers = [layer for layer in model.layers if isinstance(layer, TransformerClassifier)]
    if len(classifiers) != 1 or len(model.layers) < 3:
        kinds = [type(layer).__name__ for layer in model.layers]
        raise ValueError(
            "Expected a text vectorizer and a TransformerClassifier in the "
            f"end-to-end model. Received layers: {kinds}"
        )
    # layers[0] is the text input; the vectorizer reads it.
    return model.layers[1], classifiers[0]


def predict_texts(model, texts, batch_size=256):
    """Class probabilities `(N, C)` float32 of raw strings, through the end-to-end model.

    The texts go through in order of length (in characters, a proxy for tokens) and come
    back in their own order: each batch is cut to its longest text, and in the given order
    nearly every batch of 256 long texts holds one at the cap. The model's predictions
    do not depend on the batch a text is in.

    Example:
    >>> # probabilities = predict_texts(load_end_to_end_model(path), ["a good film"])
    """
    texts = [str(text) for text in texts]
    probabilities = np.zeros((len(texts), model.output_shape[-1]), dtype=np.float32)
    if not texts:
        return probabilities
    order = np.argsort([len(text) for text in texts], kind="stable")
    dataset = tf.data.Dataset.from_tensor_slices(tf.constant([texts[i] for i in order]))
    probabilities[order] = model.predict(dataset.batch(batch_size), verbose=0)
    return probabilities
