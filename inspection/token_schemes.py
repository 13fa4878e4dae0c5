"""How each tokenizer's tokens make the text's words, and which tokens are special.

A word-level model (`TextVectorization`) sees one token per word. A checkpoint's tokenizer
sees pieces, and puts special tokens around the text that are no word of it. Each
tokenizer marks its pieces its own way, so each has a `TokenScheme`:

- WordPiece (BERT, DistilBERT, ELECTRA): "played" is "play" "##ed", a piece after the
  first of its word starting with "##"; "[CLS]" first and "[SEP]" last; "[UNK]".
- byte-level BPE (RoBERTa): a piece that follows a space starts with "Ġ" ("Ġplay" "ed"),
  and a piece is bytes written as printable stand-ins ("Ã©" is "é"); "<s>" and "</s>".
- SentencePiece (XLM-RoBERTa): a piece that follows a space starts with "▁"; "<s>" and
  "</s>", "<unk>".

A word is what BERT's tokenizer splits a text into before looking pieces up: a run of
letters and digits, or punctuation ("don't" is "don", "'", "t" for WordPiece; "don",
"'t" for the others, whose pieces do not split "'t"). `token_scheme(vocabulary)` tells
the schemes apart by the vocabulary, which every run saves.

Letter legend: T tokens, W words.
"""

import unicodedata

import numpy as np

from inspection.word_pieces import CLASS_TOKEN, PADDING_ID, word_pieces_of
from tokenization.byte_level_bpe_tokenizer import ByteLevelBpeTokenizer, byte_symbols
from tokenization.sentence_piece_tokenizer import SentencePieceTokenizer
from tokenization.word_piece_tokenizer import WordPieceTokenizer

# Of the pieces a vocabulary lists first (the most frequent: BPE's first merges,
# SentencePiece's best scores), this many tell byte-level BPE from SentencePiece by their
# space marks: the whole vocabulary (250,002 for XLM-R) would cost every call about 45 ms.
MARKED_SAMPLE = 5000


def _tokens_of(tokenizer):
    """(start, end, padding, unknown) as the `CheckpointTokenizer` class names them."""
    return tokenizer.START, tokenizer.END, tokenizer.PAD, tokenizer.UNKNOWN


class TokenScheme:
    """How one tokenizer's tokens make words (this base: a word-level vectoriser's, every
    token a word of its own).

    Attributes:
        padding: the vocabulary's id 0.
        start, end: the tokens the tokenizer puts first and last (and between a pair's
            sides); a word-level model has no end, and its start is the learned class
            token of `pooling: cls`, not in its vocabulary.
        specials: the tokens that are no word of the text.
        unknown: the token of what the vocabulary cannot spell.
        subword: a word may be several tokens.
    """

    padding, start, end, unknown = "", CLASS_TOKEN, None, "[UNK]"
    specials = ()
    subword = False

    def continues(self, word, piece):
        """Whether `piece` continues the word whose pieces so far are `word` (a list)."""
        return False

    def join(self, pieces):
        """A word's pieces as the word's text."""
        return "".join(pieces)

    def word_index(self, tokens, class_token=False):
        """Per token, the index of the text's word it belongs to; None for a special token.

        Args:
            tokens: one example's T real tokens, as `attention_tokens.real_tokens` gives them.
            class_token: token 0 is the learned class token of a word-level `pooling: cls`
                model (special).

        Returns:
            A list of T ints or None; words are numbered from 0 in reading order.

        Example:
        >>> WORD_PIECE.word_index(["[CLS]", "play", "##ed", "well", "[SEP]"])
        [None, 0, 0, 1, None]
        >>> WORD_LEVEL.word_index(["[CLS]", "good", "film"], class_token=True)
        [None, 0, 1]
        >>> BYTE_LEVEL_BPE.word_index(["<s>", "The", "Ġplay", "ed", ".", "</s>"])
        [None, 0, 1, 1, 2, None]
        """
        indices, word, words = [], [], 0
        for position, token in enumerate(tokens):
            if (class_token and position == 0) or token in self.specials:
                indices.append(None)
                word = []
            elif word and self.continues(word, token):
                indices.append(words - 1)
                word.append(token)
            else:
                indices.append(words)
                word, words = [token], words + 1
        return indices

    def marks_word_start(self, piece):
        """Whether `piece` carries the space before it (only a space-marked scheme's can)."""
        return False

    def words(self, tokens, word_index):
        """The W words of `tokens`, each its pieces joined.

        Example:
        >>> WORD_PIECE.words(["[CLS]", "play", "##ed", "well", "[SEP]"], [None, 0, 0, 1, None])
        ['played', 'well']
        """
        return [self.join(pieces) for pieces in word_pieces_of(tokens, word_index)]


class WordPieceScheme(TokenScheme):
    """BERT's WordPiece: "##" continues a word ("##" alone is a word of its own)."""

    start, end, padding, unknown = _tokens_of(WordPieceTokenizer)
    specials = (start, end)
    subword = True
    CONTINUATION = "##"

    def continues(self, word, piece):
        return piece.startswith(self.CONTINUATION) and len(piece) > len(self.CONTINUATION)

    def join(self, pieces):
        """Example:
        >>> WORD_PIECE.join(["play", "##ed"]), WORD_PIECE.join(["[UNK]"])
        ('played', '[UNK]')
        """
        return "".join(
            piece[len(self.CONTINUATION) :] if index and self.continues(pieces, piece) else piece
            for index, piece in enumerate(pieces)
        )


class SpaceMarkedScheme(TokenScheme):
    """Pieces that carry the space before them (byte-level BPE's "Ġ", SentencePiece's "▁"):
    a piece starts a word after a space, or where letters and digits meet punctuation; a
    piece of spaces only starts the word after it, or ends the one before at a text's end."""

    subword = True
    MARK = None

    def text(self, pieces):
        """The characters the pieces (a str, or a list) stand for, spaces kept."""
        raise NotImplementedError

    def continues(self, word, piece):
        so_far, text = self.text(word), self.text(piece)
        if not so_far.strip():
            return True
        if text[:1].isspace():
            return False
        return not text.strip() or _is_word_character(so_far[-1]) == _is_word_character(text[0])

    def word_index(self, tokens, class_token=False):
        indices = super().word_index(tokens, class_token)
        # Spaces at the end of a text (or of a pair's side) join the word before them.
        blank = [not self.text(pieces).strip() for pieces in word_pieces_of(tokens, indices)]
        renumbered, previous, number = [], None, -1
        for index in indices:
            if index is not None and index != previous:
                joins = blank[index] and renumbered and renumbered[-1] is not None
                number += 0 if joins else 1
            renumbered.append(None if index is None else number)
            previous = index
        return renumbered

    def join(self, pieces):
        return self.text(pieces).strip()

    def marks_word_start(self, piece):
        """Whether `piece` carries the space before it."""
        return piece.startswith(self.MARK)


class ByteLevelBpeScheme(SpaceMarkedScheme):
    """RoBERTa's byte-level BPE: pieces are bytes in GPT-2's printable stand-ins.

    Example:
    >>> BYTE_LEVEL_BPE.join(["Ġcaf", "Ã©"]), BYTE_LEVEL_BPE.continues(["Ġcaf"], "Ã©")
    ('café', True)
    """

    start, end, padding, unknown = _tokens_of(ByteLevelBpeTokenizer)
    specials = (start, end)
    MARK = "Ġ"
    _BYTES = dict(zip(*reversed(byte_symbols()), strict=True))  # stand-in -> its byte

    def text(self, pieces):
        # A piece may hold part of a character's bytes: those read as U+FFFD, not an error.
        return self._bytes(pieces).decode("utf-8", errors="replace")

    def continues(self, word, piece):
        # Bytes that end or begin inside a character belong with the rest of it (they
        # decode to lone surrogates here, which no text holds).
        word_text = self._bytes(word).decode("utf-8", errors="surrogateescape")
        piece_text = self._bytes(piece).decode("utf-8", errors="surrogateescape")
        if _is_partial(word_text[-1:]) or _is_partial(piece_text[:1]):
            return True
        return super().continues(word, piece)

    def _bytes(self, pieces):
        return b"".join(self._BYTES.get(symbol, symbol.encode()) for symbol in "".join(pieces))


class SentencePieceScheme(SpaceMarkedScheme):
    """XLM-RoBERTa's SentencePiece: "▁" stands for the space before a piece.

    Example:
    >>> SENTENCE_PIECE.word_index(["<s>", "▁", "(", "film", ")", "▁ok", "</s>"])
    [None, 0, 0, 1, 2, 3, None]
    """

    start, end, padding, unknown = _tokens_of(SentencePieceTokenizer)
    specials = (start, end)
    MARK = "▁"

    def text(self, pieces):
        return "".join(pieces).replace(self.MARK, " ")


def _is_word_character(character):
    """Letters, digits and combining marks make words; punctuation, symbols and emoji are
    words of their own, as BERT's tokenizer splits them."""
    return unicodedata.category(character)[0] in "LNM"


def _is_partial(character):
    """Whether `character` is a byte of an unfinished character (`surrogateescape`'s)."""
    return bool(character) and "\udc80" <= character <= "\udcff"


WORD_LEVEL, WORD_PIECE = TokenScheme(), WordPieceScheme()
BYTE_LEVEL_BPE, SENTENCE_PIECE = ByteLevelBpeScheme(), SentencePieceScheme()


def token_scheme(vocabulary):
    """The `TokenScheme` of the tokenizer whose vocabulary (`get_vocabulary()`) this is:
    id 0 names WordPiece ("[PAD]") or a fairseq-style checkpoint ("<pad>"), whose pieces'
    space marks tell byte-level BPE from SentencePiece.

    Example:
    >>> token_scheme(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "play", "##ed"]) is WORD_PIECE
    True
    >>> token_scheme(["", "[UNK]", "the", "film"]) is WORD_LEVEL
    True
    >>> token_scheme(["<pad>", "<s>", "</s>", "<unk>", "▁the", "▁film"]) is SENTENCE_PIECE
    True
    """
    first = str(vocabulary[0]) if len(vocabulary) else None
    if first == WORD_PIECE.padding:
        return WORD_PIECE
    if first != BYTE_LEVEL_BPE.padding:
        return WORD_LEVEL
    marks = [
        sum(str(token).startswith(scheme.MARK) for token in vocabulary[:MARKED_SAMPLE])
        for scheme in (BYTE_LEVEL_BPE, SENTENCE_PIECE)
    ]
    return BYTE_LEVEL_BPE if marks[0] >= marks[1] else SENTENCE_PIECE


def known_token_counts(token_ids, vocabulary):
    """Per row of token ids (B, T), how many are in the vocabulary and of the text.

    Padding, the unknown token and the checkpoint's special tokens are not counted: a text whose
    count is 0 gave the model nothing of its own.

    Example:
    >>> known_token_counts(np.array([[2, 4, 1, 3, 0]]),
    ...                    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "film"]).tolist()
    [1]
    """
    scheme = token_scheme(vocabulary)
    ignored = {scheme.unknown, *scheme.specials}
    ignored_ids = [PADDING_ID] + [
        token_id for token_id, token in enumerate(vocabulary) if token in ignored
    ]
    return np.sum(~np.isin(np.asarray(token_ids), ignored_ids), axis=-1)  # (B,)


def text_token_mask(token_ids, vocabulary):
    """Boolean (B, T): True for the tokens of the text itself, False for padding and a
    checkpoint's special tokens: the tokens explanations rank and remove.

    Example:
    >>> text_token_mask(np.array([[2, 4, 3, 0]]), ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "film"])
    array([[False,  True, False, False]])
    """
    token_ids = np.asarray(token_ids)
    specials = token_scheme(vocabulary).specials
    special = [token_id for token_id, token in enumerate(vocabulary) if token in specials]
    return (token_ids != PADDING_ID) & ~np.isin(token_ids, special)  # (B, T)
