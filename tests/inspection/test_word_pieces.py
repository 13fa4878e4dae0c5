import pytest

from inspection.token_schemes import WORD_PIECE
from inspection.word_pieces import check_word_index, word_pieces_of, word_sums


def test_words_join_their_pieces_and_sum_their_values():
    tokens = ["[CLS]", "the", "play", "##ed", "##s", "!", "[SEP]"]
    indices = [None, 0, 1, 1, 1, 2, None]
    assert word_pieces_of(tokens, indices) == [["the"], ["play", "##ed", "##s"], ["!"]]
    assert WORD_PIECE.words(tokens, indices) == ["the", "playeds", "!"]
    values = [0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.5, 0.015625]
    assert word_sums(values, indices).tolist() == [0.125, 0.109375, 0.5]
    assert word_sums([], []).tolist() == []
    assert WORD_PIECE.join(["##ed"]) == "##ed"  # a first piece keeps its "##"


def test_a_word_index_must_number_every_token_s_word_in_order():
    check_word_index([None, 0, 0, 1, None], 5, "a")
    with pytest.raises(ValueError, match=r"example 'a' needs one entry per token \(4\)"):
        check_word_index([None, 0, 0, 1, None], 4, "a")
    for bad in ([1], [0, 2], [0, 1, 0], [-1], [True], [0.0]):
        with pytest.raises(ValueError, match="must number the words 0, 1"):
            check_word_index(bad, len(bad), "a")
