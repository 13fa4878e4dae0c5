"""Which word of the text each token belongs to: the `word_index` lists every
`inspection.token_schemes.TokenScheme` makes, read into words and their sums.

A `word_index` gives per token the index of its text's word, None for a special token
("[CLS]", "<s>"): a word-level model's tokens are a word each, a checkpoint's pieces may
be several (`token_schemes`). Attention stays per token (the model attends between
pieces); what people read (the viewer, `predict.py --explain`) is per word, a word's
importance being the sum of its pieces'.

Letter legend: T tokens, W words.
"""

import numpy as np

PADDING_ID = 0
# Shown for the learned class token that a word-level `pooling: cls` model puts first.
CLASS_TOKEN = "[CLS]"


def word_pieces_of(tokens, word_index):
    """The tokens of each word, in order: W lists of pieces.

    Example:
    >>> word_pieces_of(["[CLS]", "play", "##ed", "well"], [None, 0, 0, 1])
    [['play', '##ed'], ['well']]
    """
    pieces = [[] for _ in range(num_words(word_index))]
    for token, index in zip(tokens, word_index, strict=True):
        if index is not None:
            pieces[index].append(token)
    return pieces


def word_sums(values, word_index):
    """Per word, the sum of its tokens' values (T,) -> float64 (W,); special tokens are left out.

    Example:
    >>> word_sums([0.4, 0.1, 0.2, 0.25, 0.05], [None, 0, 0, 1, None]).tolist()
    [0.30000000000000004, 0.25]
    """
    values = np.asarray(values, dtype=np.float64)  # (T,)
    is_word = np.array([index is not None for index in word_index], dtype=bool)  # (T,)
    indices = np.array([index for index in word_index if index is not None], dtype=np.int64)
    return np.bincount(indices, weights=values[is_word], minlength=num_words(word_index)).astype(
        np.float64
    )  # (W,)


def num_words(word_index):
    """How many words a `word_index` list numbers.

    Example:
    >>> num_words([None, 0, 0, 1, None])
    2
    """
    return max((index + 1 for index in word_index if index is not None), default=0)


def check_word_index(word_index, num_tokens, example_id, words=None):
    """A ValueError unless `word_index` numbers `num_tokens` tokens' words 0, 1, ... in order
    (and, given, the `words`' texts are one per word)."""
    expected = 0
    for index in word_index:
        if index is None:
            continue
        is_int = isinstance(index, (int, np.integer)) and not isinstance(index, bool)
        # Each word's index is the next one, or the one before for its later pieces.
        if not is_int or index not in (expected, expected - 1) or index < 0:
            raise ValueError(
                f"word_index of example {example_id!r} must number the words 0, 1, ... in "
                f"reading order (None for special tokens). Received: {list(word_index)}"
            )
        expected = int(index) + 1
    if len(word_index) != num_tokens:
        raise ValueError(
            f"word_index of example {example_id!r} needs one entry per token ({num_tokens}). "
            f"Received: {len(word_index)} entries"
        )
    if words is not None and len(words) != num_words(word_index):
        raise ValueError(
            f"word_texts of example {example_id!r} needs one text per word of its "
            f"word_index ({num_words(word_index)}). Received: {len(words)} texts"
        )
