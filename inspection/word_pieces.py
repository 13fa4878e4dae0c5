"""Which word of the text each token belongs to, and which tokens are special.

A word-level model (`TextVectorization`) sees one token per word. A WordPiece model
(BERT's tokenizer, `tokenization.WordPieceTokenizer`) sees pieces: "played" is "play"
"##ed", a piece after the first of its word starting with "##", and every text starts
with "[CLS]" and ends with "[SEP]", which are no word of the text. A word is what the
tokenizer splits the text into before looking pieces up: a run of letters and digits, or
one punctuation character ("don't" is the three words "don", "'", "t"); one it cannot
spell is the single piece "[UNK]".

Attention stays per token (the model attends between pieces); what people read (the
viewer, `predict.py --explain`) is per word, a word's importance being the sum of its
pieces'.

Letter legend: T tokens, W words.
"""

import numpy as np

PADDING_ID = 0
OUT_OF_VOCABULARY = "[UNK]"
# Added to every text by a WordPiece tokenizer; `pooling: cls` reads the first.
SPECIAL_TOKENS = ("[CLS]", "[SEP]")
CONTINUATION_PREFIX = "##"
# BERT vocabularies put "[PAD]" at id 0; TextVectorization's id 0 is "", its mask token.
WORD_PIECE_PADDING = "[PAD]"


def is_word_piece(vocabulary):
    """Whether `vocabulary` (a vectoriser's `get_vocabulary()`) is a WordPiece one.

    Example:
    >>> is_word_piece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "play", "##ed"])
    True
    >>> is_word_piece(["", "[UNK]", "the", "film"])
    False
    """
    return len(vocabulary) > 0 and vocabulary[0] == WORD_PIECE_PADDING


def word_index(tokens, word_pieces, class_token=False):
    """Per token, the index of the text's word it belongs to; None for a special token.

    Args:
        tokens: one example's T real tokens, as `attention_tokens.real_tokens` gives them.
        word_pieces: the tokens are WordPiece pieces: a "##" piece continues the word
            before it, and "[CLS]" and "[SEP]" are special.
        class_token: token 0 is the learned class token of a word-level `pooling: cls`
            model (special); every other token is a word of its own.

    Returns:
        A list of T ints or None; words are numbered from 0 in reading order.

    Example:
    >>> word_index(["[CLS]", "play", "##ed", "well", "[SEP]"], word_pieces=True)
    [None, 0, 0, 1, None]
    >>> word_index(["[CLS]", "good", "film"], word_pieces=False, class_token=True)
    [None, 0, 1]
    """
    indices, words = [], 0
    for position, token in enumerate(tokens):
        if (class_token and position == 0) or (word_pieces and token in SPECIAL_TOKENS):
            indices.append(None)
        elif word_pieces and is_continuation(token) and words and indices[-1] is not None:
            indices.append(words - 1)
        else:
            indices.append(words)
            words += 1
    return indices


def is_continuation(token):
    """Whether a WordPiece piece continues the word before it ("##ed"; "##" alone is a word).

    Example:
    >>> is_continuation("##ed"), is_continuation("##"), is_continuation("play")
    (True, False, False)
    """
    return token.startswith(CONTINUATION_PREFIX) and len(token) > len(CONTINUATION_PREFIX)


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


def join_pieces(pieces):
    """A word's pieces as the word: "play" + "##ed" -> "played".

    Example:
    >>> join_pieces(["play", "##ed"]), join_pieces(["[UNK]"])
    ('played', '[UNK]')
    """
    return "".join(
        piece[len(CONTINUATION_PREFIX) :] if index and is_continuation(piece) else piece
        for index, piece in enumerate(pieces)
    )


def words_of(tokens, word_index):
    """The W words, each its pieces joined.

    Example:
    >>> words_of(["[CLS]", "play", "##ed", "well", "[SEP]"], [None, 0, 0, 1, None])
    ['played', 'well']
    """
    return [join_pieces(pieces) for pieces in word_pieces_of(tokens, word_index)]


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


def check_word_index(word_index, num_tokens, example_id):
    """A ValueError unless `word_index` numbers `num_tokens` tokens' words 0, 1, ... in order."""
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


def known_token_counts(token_ids, vocabulary):
    """Per row of token ids (B, T), how many are in the vocabulary and of the text.

    Padding, "[UNK]" and (WordPiece) "[CLS]" and "[SEP]" are not counted: a text whose
    count is 0 gave the model nothing of its own.

    Example:
    >>> known_token_counts(np.array([[2, 4, 1, 3, 0]]),
    ...                    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "film"]).tolist()
    [1]
    """
    ignored = {OUT_OF_VOCABULARY, *(SPECIAL_TOKENS if is_word_piece(vocabulary) else ())}
    ignored_ids = [PADDING_ID] + [
        token_id for token_id, token in enumerate(vocabulary) if token in ignored
    ]
    return np.sum(~np.isin(np.asarray(token_ids), ignored_ids), axis=-1)  # (B,)


def text_token_mask(token_ids, vocabulary):
    """Boolean (B, T): True for the tokens of the text itself, False for padding and
    WordPiece's "[CLS]" and "[SEP]": the tokens explanations rank and remove.

    Example:
    >>> text_token_mask(np.array([[2, 4, 3, 0]]), ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "film"])
    array([[False,  True, False, False]])
    """
    token_ids = np.asarray(token_ids)
    special = (
        [token_id for token_id, token in enumerate(vocabulary) if token in SPECIAL_TOKENS]
        if is_word_piece(vocabulary)
        else []
    )
    return (token_ids != PADDING_ID) & ~np.isin(token_ids, special)  # (B, T)
