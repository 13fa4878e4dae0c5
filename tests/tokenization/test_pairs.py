"""Text pairs: one string through the lab, `[CLS] a [SEP] b [SEP]` and its token types as
the `tokenizers` library gives them, the cap shared as its `longest_first` shares it."""

import itertools

import numpy as np
import pytest
import tensorflow as tf
from tokenizers import Tokenizer

from layers import TokenAndPositionEmbedding
from tests.models.bert_reference import TINY_VOCABULARY, write_tokenizer_json
from tokenization import WordPieceTokenizer
from tokenization.pairs import PAIR_MARK, join_pair, separator_id, shared_lengths, split_pair

FIRSTS = [
    "Hello, World!",
    "Café naïve résumé ÀÉÎ",
    "中文字符 and 日本語",
    "emoji 😀👍🏽 ok",
    "a" * 101,
    "The film was good, not bad!",
    "THE FILMS WERE ACTED " * 20,
]
SECONDS = [
    "the film was good",
    "very very very good film " * 8,
    "tab\there\nnewline  and   spaces",
    "don't stop-believing... $5.00 #1 @user",
    "ﬁ ß İstanbul ǅ",
    "good",
]
SINGLES = FIRSTS + SECONDS + ["", "   "]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    write_tokenizer_json(path, TINY_VOCABULARY)
    return Tokenizer.from_file(str(path))


def reference_pairs(reference, pairs, cap):
    reference.no_padding()
    if cap:
        reference.enable_truncation(cap, strategy="longest_first")
    else:
        reference.no_truncation()
    return reference.encode_batch(pairs)


@pytest.mark.parametrize("cap", [None, 8, 13, 32])
def test_pair_ids_and_types_are_the_reference_ones(reference, cap):
    pairs = [(a, b) for a, b in itertools.product(FIRSTS, SECONDS) if a.strip() and b.strip()]
    texts = [join_pair(a, b) for a, b in pairs]
    tokenizer = WordPieceTokenizer(TINY_VOCABULARY, sequence_length=cap, pairs=True)
    ids = tokenizer(tf.constant(texts)).numpy()
    encodings = reference_pairs(reference, pairs, cap)
    ours = [[int(i) for i in row if i != 0] for row in ids]
    assert ours == [encoding.ids for encoding in encodings]
    # The embedding's token types, derived from the ids, are the reference's type ids.
    embedding = TokenAndPositionEmbedding(
        len(TINY_VOCABULARY), 4, num_token_types=2, separator_id=separator_id(TINY_VOCABULARY)
    )
    types = embedding.token_types(ids).numpy()
    assert [row[: len(e.ids)].tolist() for row, e in zip(types, encodings)] == [
        e.type_ids for e in encodings
    ]


def test_single_texts_in_a_pair_tokenizer_read_as_before():
    single = WordPieceTokenizer(TINY_VOCABULARY, sequence_length=6)
    paired = single.for_pairs()
    texts = tf.constant(SINGLES)
    np.testing.assert_array_equal(paired(texts), single(texts))
    assert paired.get_config()["pairs"] and not single.get_config()["pairs"]


def test_shared_lengths_match_longest_first_on_every_small_case(reference):
    cases = list(itertools.product(range(12), range(12), range(4, 16)))
    first, second, cap = (np.array(column) for column in zip(*cases))
    kept = shared_lengths(first, second, cap - 3)
    for (a, b, c), ka, kb in zip(cases, *kept):
        reference.enable_truncation(int(c), strategy="longest_first")
        encoding = reference.encode("the " * a, "film " * b)
        assert (ka, kb) == (encoding.ids.count(9), encoding.ids.count(8)), (a, b, c)


def test_join_and_split_round_trip_and_the_mark_is_refused_in_a_side():
    assert split_pair(join_pair("Is it?", " spaced ")) == ("Is it?", " spaced ")
    assert split_pair("one text") == ("one text",)
    with pytest.raises(ValueError, match="U\\+241E"):
        join_pair(f"a {PAIR_MARK} b", "c")
    with pytest.raises(ValueError, match="not made for text pairs"):
        separator_id(["", "[UNK]", "word"])
