"""The TextVectorization layer adapted on the train split."""

import math
from collections.abc import Sequence

import keras
import numpy as np
import tensorflow as tf

from config import TextConfig
from tokenization.checkpoint_tokenizer import CheckpointTokenizer
from tokenization.stop_words import lower_strip_punctuation_drop_stop_words

# `text.sequence_length: auto` keeps this share of the training texts whole, rounded up to
# a multiple of 8 within these bounds.
AUTO_QUANTILE = 0.99
AUTO_BOUNDS = (8, 512)


def make_vectorizer(
    text: TextConfig | dict,
    train_texts: Sequence[str] | tf.data.Dataset,
    vocabulary: Sequence[str] | None = None,
    tokenizer=None,
) -> keras.layers.TextVectorization:
    """Returns a `TextVectorization` adapted on `train_texts` only.

    Id 0 is padding (so `mask_zero=True` embeddings mask it) and id 1 is out-of-vocabulary;
    texts longer than `sequence_length` keep their first tokens. Adapt on train only:
    words seen only in validation or test must map to 1, as they will for new text.
    `sequence_length: auto` becomes the 99th percentile of the training texts' token
    counts (see `auto_sequence_length`). `train_texts` may be a tf.data stream of string
    batches (a sample of a streamed split): it is read once, never held.

    Example:
    >>> vectorizer = make_vectorizer({"vocabulary_size": 10, "sequence_length": 4}, ["a b b"])
    >>> vectorizer(["b a c"]).numpy().tolist()
    [[2, 3, 1, 0]]
    >>> make_vectorizer({}, ["a b b"]).get_config()["output_sequence_length"]
    8
    """
    text = TextConfig.of(text)
    if tokenizer is not None:
        # A checkpoint's WordPiece tokenizer: only the cap is ours to set.
        if text.sequence_length != "auto":
            return tokenizer.with_sequence_length(text.sequence_length)
        # Lengths over the bound need not be counted: the cap stops there.
        counting = tokenizer.with_sequence_length(AUTO_BOUNDS[1] + 1)
        return tokenizer.with_sequence_length(auto_sequence_length(counting, _batches(train_texts)))
    if vocabulary is not None:
        # A pretrained encoder's vocabulary: its token ids must mean what they meant then.
        vectorizer = _vectorizer(text, text.sequence_length)
        vectorizer.set_vocabulary(list(vocabulary))
        return vectorizer
    texts = _batches(train_texts)
    if text.sequence_length != "auto":
        vectorizer = _vectorizer(text, text.sequence_length)
        vectorizer.adapt(texts)
        return vectorizer
    # One pass adapts the vocabulary and counts each text's tokens (a stream is read once):
    # `counter` splits as the vectoriser does, every token an id above 0 (padding).
    adapting, counter = _vectorizer(text, None), _vectorizer(text, None)
    counter.set_vocabulary(["[counted]"])
    adapting.reset_state()
    counts = [np.zeros(0, np.int64)]
    for batch in texts:
        adapting.update_state(batch)
        counts.append(np.count_nonzero(counter(batch).numpy(), axis=1))
    adapting.finalize_state()
    capped = _vectorizer(text, quantile_length(np.concatenate(counts)))
    capped.set_vocabulary(adapting.get_vocabulary())
    return capped


def _batches(texts):
    if isinstance(texts, tf.data.Dataset):
        return texts
    # Object arrays become tf.string directly; astype(str) would pad every text to the
    # longest one (gigabytes for 20 Newsgroups).
    return tf.data.Dataset.from_tensor_slices(tf.constant(np.asarray(texts, dtype=object))).batch(
        2048
    )


def _vectorizer(text: TextConfig, sequence_length: int | None):
    # The config spells "keep the text as it is" as "none" (YAML null means "unset").
    standardize = None if text.standardize == "none" else text.standardize
    if text.stop_words == "english":
        standardize = lower_strip_punctuation_drop_stop_words
    return keras.layers.TextVectorization(
        max_tokens=text.vocabulary_size,
        output_sequence_length=sequence_length,
        standardize=standardize,
        output_mode="int",
        name="text_vectorization",
    )


def auto_sequence_length(vectorizer, texts) -> int:
    """The 99th percentile of the token counts of `texts` (batches of strings), rounded up
    to a multiple of 8 and kept within 8 and 512."""
    return quantile_length(np.concatenate([
        np.count_nonzero(vectorizer(batch).numpy(), axis=1) for batch in texts
    ]))  # fmt: skip


def quantile_length(counts: np.ndarray) -> int:
    """The cap of `auto`: the 99th percentile of the token `counts`, rounded up to a
    multiple of 8 and kept within 8 and 512."""
    length = 8 * math.ceil(np.quantile(counts, AUTO_QUANTILE) / 8)
    return int(min(max(length, AUTO_BOUNDS[0]), AUTO_BOUNDS[1]))


def sequence_cap(vectorizer) -> int | None:
    """The most token ids a vectorizer gives a text (its `output_sequence_length`)."""
    return vectorizer.get_config()["output_sequence_length"]


def token_counter(vectorizer):
    """A function: texts -> each text's token count before the vectorizer's cap, int (B,).
    A count over `sequence_cap(vectorizer)` means the model reads the text cut.

    Example:
    >>> vectorizer = make_vectorizer({"vocabulary_size": 10, "sequence_length": 2}, ["a b"])
    >>> token_counter(vectorizer)(["a b c d", "a"]).tolist()
    [4, 1]
    """
    if isinstance(vectorizer, CheckpointTokenizer):
        uncapped = vectorizer.with_sequence_length(None)
    else:
        # Its standardisation and split; every token an id above 0 (padding).
        uncapped = keras.layers.TextVectorization.from_config(
            {
                **vectorizer.get_config(),
                "output_sequence_length": None,
                "vocabulary": None,
                "idf_weights": None,
            }
        )
        uncapped.set_vocabulary(["[counted]"])
    counts = tf.function(
        lambda texts: tf.math.count_nonzero(uncapped(texts), axis=1),
        input_signature=[tf.TensorSpec((None,), tf.string)],
        autograph=False,
    )
    return lambda texts: counts(tf.constant(list(texts), tf.string)).numpy()
