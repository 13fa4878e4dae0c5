"""Text pairs as one string: the two sides joined by a mark no text holds.

A pair (a question and its candidate duplicate, a premise and its hypothesis) travels
through the lab as one string, `first ␞ second`: a file's two text columns are joined when
they are read (`data.reading`), and `predict.py --pair`, the live API and `inspection.show`
join theirs the same way, so every report that lists texts lists pairs too. The saved model
takes that string. A checkpoint's `WordPieceTokenizer` splits it back into
`[CLS] first [SEP] second [SEP]`, sharing the length cap between the sides as Hugging
Face's tokenizers do (`shared_lengths`); the from-scratch vectorizer reads the mark as a
word of its own. Either way the encoder's token-type (segment) embedding tells the sides
apart: the tokens after the first separator are type 1 (`separator_id`).
"""

import numpy as np

# U+241E SYMBOL FOR RECORD SEPARATOR: a symbol, not punctuation, so the vectorizer's
# standardisation keeps it as a word; BERT's normalisation is never shown it.
PAIR_MARK = "\u241e"
PAIR_JOIN = f" {PAIR_MARK} "


def join_pair(first: str, second: str) -> str:
    """The one string of a pair.

    Raises:
        ValueError: a side holds the pair mark itself.

    Example:
    >>> join_pair("Is it raining?", "Will it rain?")
    'Is it raining? ␞ Will it rain?'
    >>> split_pair(join_pair("a", "b"))
    ('a', 'b')
    """
    for side in (first, second):
        if PAIR_MARK in side:
            raise ValueError(
                f"a text of a pair holds {PAIR_MARK!r} (U+241E), the mark that joins the two "
                f"sides; remove it: {side[:60]!r}"
            )
    return f"{first}{PAIR_JOIN}{second}"


def join_pairs(firsts, seconds) -> np.ndarray:
    """`join_pair` of each row of two equally long sequences: an object array of `str`."""
    pairs = [join_pair(str(a), str(b)) for a, b in zip(firsts, seconds, strict=True)]
    return np.array(pairs, dtype=object)


def as_text(item) -> str:
    """A text, or a pair given as two strings ([first, second]) joined into one.

    Raises:
        ValueError: anything else, or a side holding the pair mark.

    Example:
    >>> as_text(["Is it raining?", "Will it rain?"]) == join_pair("Is it raining?", "Will it rain?")
    True
    """
    if isinstance(item, str):
        return item
    if isinstance(item, list | tuple) and len(item) == 2 and all(isinstance(s, str) for s in item):
        return join_pair(*item)
    raise ValueError(
        f'each text must be a string or a pair of strings ["first", "second"]; got {item!r:.100}'
    )


def split_pair(text: str) -> tuple[str, ...]:
    """(first, second) of a joined pair; (text,) of a single text."""
    if PAIR_MARK not in text:
        return (text,)
    first, second = text.split(PAIR_MARK, 1)
    return first.removesuffix(" "), second.removeprefix(" ")


def separator_id(vocabulary) -> int:
    """The id after which a pair's second side begins: a checkpoint's `[SEP]` (RoBERTa's
    `</s>`), else the pair mark's id in a vectorizer's vocabulary.

    Example:
    >>> separator_id(["", "[UNK]", "the", PAIR_MARK])
    3
    """
    vocabulary = list(vocabulary)
    for token in ("[SEP]", "</s>", PAIR_MARK):
        if token in vocabulary:
            return vocabulary.index(token)
    raise ValueError(
        f"the vocabulary has no [SEP], </s> or {PAIR_MARK!r}: it was not made for text pairs"
    )


def shared_lengths(first, second, budget, xp=np):
    """How many tokens each side of a pair keeps within `budget` (arrays of one shape):
    Hugging Face's `longest_first` truncation in closed form. Both sides whole when they
    fit; else the shorter keeps at most half the budget (rounded down) and the longer the
    rest; of two equal sides the second keeps the odd one. `xp`: the arrays' module
    (`tf.experimental.numpy` for tensors).

    Example:
    >>> shared_lengths(np.array([3, 10, 2, 5]), np.array([4, 3, 10, 5]), np.array([9, 9, 9, 9]))
    (array([3, 6, 2, 4]), array([4, 3, 7, 5]))
    """
    half = budget // 2
    fits = first + second <= budget
    first_longer = first > second
    second_kept = xp.minimum(second, half)
    first_kept = xp.minimum(first, half)
    kept_first = xp.where(fits, first, xp.where(first_longer, budget - second_kept, first_kept))
    kept_second = xp.where(fits, second, xp.where(first_longer, second_kept, budget - first_kept))
    return kept_first, kept_second
