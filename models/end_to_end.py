"""The saved model: raw strings in, class probabilities out."""

import keras
import numpy as np
import tensorflow as tf

from models.trim_padding import TrimPadding

VECTORIZER = "text_vectorization"
CLASSIFIER = "classifier"


def build_end_to_end_model(vectorizer, classifier, name="text_classifier", trim_padding=True):
    """Puts the adapted `TextVectorization` in front of the classifier.

    Args:
        vectorizer: an adapted `keras.layers.TextVectorization` (int output, pad id 0).
        classifier: the trained model from `build_classifier`.
        name: model name.
        trim_padding: cut each batch to its longest text (`TrimPadding`). Only for a
            classifier that masks padding (`mask_zero`); one that sees padding must get
            texts padded to the cap, as in training.

    Returns:
        A `keras.Model` mapping strings `(B,)` to probabilities `(B, C)`. Its layers are
        named "text_vectorization" and "classifier" (see `get_model_parts`). It is what
        `train.py` saves as `model.keras`.

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
    if classifier.name != CLASSIFIER:
        raise ValueError(
            f"The classifier must be named {CLASSIFIER!r}. Received: name={classifier.name!r}"
        )
    text = keras.Input(shape=(), dtype="string", name="text")
    token_ids = vectorizer(text)  # (B, cap): padded to the sequence length cap
    if trim_padding:
        token_ids = TrimPadding(name="trim_padding")(token_ids)  # (B, T): the longest text
    probabilities = classifier(token_ids)  # (B, C)
    return keras.Model(text, probabilities, name=name)


def load_end_to_end_model(path):
    """Loads a saved `model.keras` in safe mode.

    Keras finds custom classes through its registry, filled when their modules are
    imported; this module's package imports them all (`import models`).

    Example:

    >>> # model = load_end_to_end_model("runs/default/model.keras")
    >>> # vectorizer, classifier = get_model_parts(model)
    """
    return keras.saving.load_model(path, safe_mode=True)


def get_model_parts(model):
    """Returns `(vectorizer, classifier)` from an end-to-end model, e.g. a loaded `model.keras`.

    Raises:
        ValueError: when `model` is not an end-to-end model from `build_end_to_end_model`.
    """
    try:
        return model.get_layer(VECTORIZER), model.get_layer(CLASSIFIER)
    except ValueError:
        names = [layer.name for layer in model.layers]
        raise ValueError(
            f"Expected layers {VECTORIZER!r} and {CLASSIFIER!r} in the end-to-end model. "
            f"Received layers: {names}"
        ) from None


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
