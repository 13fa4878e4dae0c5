"""The vectoriser's standardisation that also drops English stop words (`text.stop_words`).

It is part of the saved end-to-end model: the `TextVectorization` inside `model.keras`
names it, and `import models` (through `import tokenization`) registers it, so the model
loads in safe mode and drops the same words from new text.
"""

import re

import keras
import tensorflow as tf
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

# Keras' own `lower_and_strip_punctuation` pattern (TextVectorization), applied first.
PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
# A run of stop words, each one a whole whitespace-separated token: the text is framed by
# spaces, and every word of the run must end in whitespace ("theory" is not "the").
STOP_WORD_RUN = r"\s(?:(?:" + "|".join(map(re.escape, sorted(ENGLISH_STOP_WORDS))) + r")\s+)+"


@keras.saving.register_keras_serializable(package="keras_attention_lab")
def lower_strip_punctuation_drop_stop_words(texts):
    """Lower-cases, strips punctuation as Keras does, then drops scikit-learn's 318 English
    stop words; `texts` is a string tensor.

    Example:
    >>> texts = tf.constant(["The cat's theory of THE dog.", "not\\n\\nan  ox"])
    >>> lower_strip_punctuation_drop_stop_words(texts).numpy().tolist()
    [b' cats theory dog ', b' ox ']
    """
    texts = tf.strings.regex_replace(tf.strings.lower(texts), PUNCTUATION, "")
    return tf.strings.regex_replace(" " + texts + " ", STOP_WORD_RUN, " ")
