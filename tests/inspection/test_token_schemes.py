"""inspection/token_schemes.py: each tokenizer's pieces grouped into words (against the
`tokenizers` library's offsets for RoBERTa's and XLM-RoBERTa's), and its special and
unknown tokens."""

import unicodedata

import numpy as np
import pytest
from tokenizers import Tokenizer

from inspection.token_schemes import (
    BYTE_LEVEL_BPE,
    SENTENCE_PIECE,
    WORD_LEVEL,
    WORD_PIECE,
    known_token_counts,
    text_token_mask,
    token_scheme,
)
from tests.tokenization.tokenizer_cases import HARD_CASES

WORD_PIECE_VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "play", "##ed", "##s", "!"]
WORD_LEVEL_VOCABULARY = ["", "[UNK]", "the", "film", "played"]
BPE_VOCABULARY = ["<pad>", "<s>", "</s>", "<unk>", "Ġ", "a", "Ġthe", "Ġplay", "ed", "▁x"]
SENTENCE_PIECE_VOCABULARY = ["<pad>", "<s>", "</s>", "<unk>", "▁", "▁the", "▁play", "ed", "Ġ"]


def test_the_vocabulary_tells_the_tokenizer_s_scheme():
    assert token_scheme(WORD_PIECE_VOCABULARY) is WORD_PIECE
    assert token_scheme(WORD_LEVEL_VOCABULARY) is WORD_LEVEL
    assert token_scheme([]) is WORD_LEVEL
    assert token_scheme(BPE_VOCABULARY) is BYTE_LEVEL_BPE
    assert token_scheme(SENTENCE_PIECE_VOCABULARY) is SENTENCE_PIECE
    assert token_scheme(np.array(BPE_VOCABULARY)) is BYTE_LEVEL_BPE


@pytest.mark.parametrize(
    "tokens, expected",
    [
        (["[CLS]", "the", "play", "##ed", "##s", "!", "[SEP]"], [None, 0, 1, 1, 1, 2, None]),
        (["[CLS]", "[UNK]", "play", "[SEP]"], [None, 0, 1, None]),  # [UNK] is a word
        (["[CLS]", "##ed", "##s", "[SEP]"], [None, 0, 0, None]),  # cut text: no word before
        (["[CLS]", "##", "[SEP]"], [None, 0, None]),  # "##" alone is no continuation
        (["[CLS]", "a", "[SEP]", "##b", "[SEP]"], [None, 0, None, 1, None]),  # pair sides
        (["[CLS]", "[SEP]"], [None, None]),
        ([], []),
    ],
)
def test_word_pieces_continue_their_word_and_specials_have_none(tokens, expected):
    assert WORD_PIECE.word_index(tokens) == expected


def test_word_level_tokens_are_a_word_each_but_the_class_token():
    assert WORD_LEVEL.word_index(["the", "##ed", "[SEP]"]) == [0, 1, 2]
    assert WORD_LEVEL.word_index(["[CLS]", "good", "film"], class_token=True) == [None, 0, 1]


@pytest.mark.parametrize(
    "scheme, tokens, expected_index, expected_words",
    [
        (  # the first word has no space mark; punctuation after a letter is a word
            BYTE_LEVEL_BPE,
            ["<s>", "The", "Ġplay", "ed", "Ġwell", ".", "</s>"],
            [None, 0, 1, 1, 2, 3, None],
            ["The", "played", "well", "."],
        ),
        (  # "é" is two bytes, "caf" + "Ã©"; "'s" is one piece; a pair's sides
            BYTE_LEVEL_BPE,
            ["<s>", "Ġcaf", "Ã©", "'s", "</s>", "</s>", "ok", "Ġ", "Ġ", "</s>"],
            [None, 0, 0, 1, None, None, 2, 2, 2, None],
            ["café", "'s", "ok"],
        ),
        (  # a CJK character's three bytes split over two pieces, then a word after a space
            BYTE_LEVEL_BPE,
            ["<s>", "ä¸", "Ń", "Ġa", "</s>"],
            [None, 0, 0, 1, None],
            ["中", "a"],
        ),
        (  # a lone "▁" goes with the piece after it
            SENTENCE_PIECE,
            ["<s>", "▁", "(", "film", ")", "▁ok", "▁", "é", "s", "</s>"],
            [None, 0, 0, 1, 2, 3, 4, 4, 4, None],
            ["(", "film", ")", "ok", "és"],
        ),
        (
            SENTENCE_PIECE,
            ["<s>", "▁don", "'", "t", "▁stop", "<unk>", "</s>"],
            [None, 0, 1, 2, 3, 4, None],
            ["don", "'", "t", "stop", "<unk>"],
        ),
    ],
)
def test_space_marked_pieces_make_words(scheme, tokens, expected_index, expected_words):
    indices = scheme.word_index(tokens)
    assert indices == expected_index
    assert scheme.words(tokens, indices) == expected_words


def _word_character(character):
    return unicodedata.category(character)[0] in "LNM"


@pytest.mark.parametrize("model_type", ["roberta", "xlm-roberta"])
def test_words_are_the_text_between_their_pieces_offsets(hf_checkpoint, model_type):
    """On the tokenizers' battery: each word is the text its first to last piece cover
    (`tokenizers`' offsets), words never hold a space, and two words meet without one only
    where letters or digits meet punctuation."""
    folder = hf_checkpoint(model_type, head=False)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    scheme = BYTE_LEVEL_BPE if model_type == "roberta" else SENTENCE_PIECE
    checked = 0
    for text in HARD_CASES:
        # XLM-R's normaliser changes some characters (NFKC): its pieces spell another text.
        if scheme is SENTENCE_PIECE and unicodedata.normalize("NFKC", text) != text:
            continue
        encoding = tokenizer.encode(text)
        indices = scheme.word_index(encoding.tokens)
        spans = [[] for _ in range(max([-1] + [i for i in indices if i is not None]) + 1)]
        for index, offsets in zip(indices, encoding.offsets, strict=True):
            if index is not None:
                spans[index].append(offsets)
        expected = [text[span[0][0] : span[-1][1]].strip() for span in spans]
        words = scheme.words(encoding.tokens, indices)
        assert words == expected, text
        for before, after in zip(spans, spans[1:]):
            gap = text[before[-1][1] : after[0][0]]
            # Spaces, or control characters the normaliser removed.
            assert all(c.isspace() or unicodedata.category(c)[0] == "C" for c in gap), text
            if gap == "" and text[before[-1][1] - 1 : after[0][0] + 1].strip():
                left, right = text[before[-1][1] - 1], text[after[0][0]]
                assert _word_character(left) != _word_character(right), (text, left, right)
        checked += 1
    assert checked >= len(HARD_CASES) - 8


def test_known_tokens_leave_out_padding_unknown_and_special_tokens():
    # [CLS] the [UNK] play ##ed [SEP] [PAD]; [CLS] [UNK] [SEP] [PAD] ...
    word_pieces = np.array([[2, 4, 1, 5, 6, 3, 0], [2, 1, 3, 0, 0, 0, 0]])
    assert known_token_counts(word_pieces, WORD_PIECE_VOCABULARY).tolist() == [3, 0]
    word_level = np.array([[2, 1, 4, 0], [1, 1, 0, 0]])
    assert known_token_counts(word_level, WORD_LEVEL_VOCABULARY).tolist() == [2, 0]


def test_checkpoint_specials_and_unknown_are_no_text_tokens():
    # <s> Ġthe <unk> Ġplay ed </s> <pad>
    ids = np.array([[1, 6, 3, 7, 8, 2, 0]])
    assert known_token_counts(ids, BPE_VOCABULARY).tolist() == [3]
    assert text_token_mask(ids, BPE_VOCABULARY).tolist() == [
        [False, True, True, True, True, False, False]
    ]
