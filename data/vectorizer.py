"""The TextVectorization layer adapted on the train split."""

from collections.abc import Sequence

import keras
import numpy as np
import tensorflow as tf

from config import TextConfig


def make_vectorizer(
    text: TextConfig | dict, train_texts: Sequence[str]
) -> keras.layers.TextVectorization:
    """Returns a `TextVectorization` adapted on `train_texts` only.

    Id 0 is padding (so `mask_zero=True` embeddings mask it) and id 1 is out-of-vocabulary;
    texts longer than `sequence_length` keep their first tokens. Adapt on train only:
    words seen only in validation or test must map to 1, as they will for new text.

    Example:
    >>> vectorizer = make_vectorizer({"vocabulary_size": 10, "sequence_length": 4}, ["a b b"])
    >>> vectorizer(["b a c"]).numpy().tolist()
    [[2, 3, 1, 0]]
    """
    text = TextConfig.of(text)
    vectorizer = keras.layers.TextVectorization(
        max_tokens=text.vocabulary_size,
        output_sequence_length=text.sequence_length,
        # The config spells "keep the text as it is" as "none" (YAML null means "unset").
        standardize=None if text.standardize == "none" else text.standardize,
        output_mode="int",
        name="text_vectorization",
    )
    # Object arrays become tf.string directly; astype(str) would pad every text to the
    # longest one (gigabytes for 20 Newsgroups).
    texts = tf.constant(np.asarray(train_texts, dtype=object))
    vectorizer.adapt(tf.data.Dataset.from_tensor_slices(texts).batch(2048))
    return vectorizer
