import numpy as np
import pytest

from inspection.word_pieces import (
    check_word_index,
    is_word_piece,
    join_pieces,
    known_token_counts,
    word_index,
    word_pieces_of,
    word_sums,
    words_of,
)

WORD_PIECE_VOCABULARY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "play", "##ed", "##s", "!"]
WORD_LEVEL_VOCABULARY = ["", "[UNK]", "the", "film", "played"]


def test_a_vocabulary_is_word_piece_when_pad_is_id_0():
    assert is_word_piece(WORD_PIECE_VOCABULARY)
    assert not is_word_piece(WORD_LEVEL_VOCABULARY)
    assert not is_word_piece([])


@pytest.mark.parametrize(
    "tokens, expected",
    [
        (["[CLS]", "the", "play", "##ed", "##s", "!", "[SEP]"], [None, 0, 1, 1, 1, 2, None]),
        (["[CLS]", "[UNK]", "play", "[SEP]"], [None, 0, 1, None]),  # [UNK] is a word
        (["[CLS]", "##ed", "##s", "[SEP]"], [None, 0, 0, None]),  # cut text: no word before
        (["[CLS]", "##", "[SEP]"], [None, 0, None]),  # "##" alone is no continuation
        (["[CLS]", "[SEP]"], [None, None]),
        ([], []),
    ],
)
def test_word_pieces_continue_their_word_and_specials_have_none(tokens, expected):
    assert word_index(tokens, word_pieces=True) == expected


def test_word_level_tokens_are_a_word_each_but_the_class_token():
    assert word_index(["the", "##ed", "[SEP]"], word_pieces=False) == [0, 1, 2]
    assert word_index(["[CLS]", "good", "film"], word_pieces=False, class_token=True) == [
        None,
        0,
        1,
    ]


def test_words_join_their_pieces_and_sum_their_values():
    tokens = ["[CLS]", "the", "play", "##ed", "##s", "!", "[SEP]"]
    indices = [None, 0, 1, 1, 1, 2, None]
    assert word_pieces_of(tokens, indices) == [["the"], ["play", "##ed", "##s"], ["!"]]
    assert words_of(tokens, indices) == ["the", "playeds", "!"]
    values = [0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.5, 0.015625]
    assert word_sums(values, indices).tolist() == [0.125, 0.109375, 0.5]
    assert word_sums([], []).tolist() == []
    assert join_pieces(["##ed"]) == "##ed"  # a first piece keeps its "##"


def test_a_word_index_must_number_every_token_s_word_in_order():
    check_word_index([None, 0, 0, 1, None], 5, "a")
    with pytest.raises(ValueError, match=r"example 'a' needs one entry per token \(4\)"):
        check_word_index([None, 0, 0, 1, None], 4, "a")
    for bad in ([1], [0, 2], [0, 1, 0], [-1], [True], [0.0]):
        with pytest.raises(ValueError, match="must number the words 0, 1"):
            check_word_index(bad, len(bad), "a")


def test_known_tokens_leave_out_padding_unknown_and_special_tokens():
    # [CLS] the [UNK] play ##ed [SEP] [PAD]; [CLS] [UNK] [SEP] [PAD] ...
    word_pieces = np.array([[2, 4, 1, 5, 6, 3, 0], [2, 1, 3, 0, 0, 0, 0]])
    assert known_token_counts(word_pieces, WORD_PIECE_VOCABULARY).tolist() == [3, 0]
    word_level = np.array([[2, 1, 4, 0], [1, 1, 0, 0]])
    assert known_token_counts(word_level, WORD_LEVEL_VOCABULARY).tolist() == [2, 0]
