"""ByteLevelBpeTokenizer: the ids of the `tokenizers` library (RoBERTa's tokenizer.json, as
`transformers` saves it) on hard cases, pairs and caps, eager and in a graph, and saved."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from tokenizers import Tokenizer

from tests.models.hf_reference import write_bpe_tokenizer
from tests.tokenization.tokenizer_cases import BPE_CASES, HARD_CASES, as_theirs, theirs
from tokenization import ByteLevelBpeTokenizer
from tokenization.pairs import join_pair

PAIRS = [
    ("The film was very good!", "bad, bad plot"),
    ("a  b", "  trailing  "),
    ("", "only the second"),
    ("一 好 " * 10, "short"),
    ("long side " * 12, "long side too " * 9),
]


@pytest.fixture(scope="module")
def bpe_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bpe")
    write_bpe_tokenizer(folder)
    return folder


def ours_of(folder, **options):
    """Our tokenizer of the folder's vocab.json and merges.txt, ids 0 and 1 swapped (`<pad>`
    first), as `read_checkpoint` makes it."""
    ids = Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab()
    vocabulary = sorted(ids, key=ids.get)
    vocabulary[0], vocabulary[1] = vocabulary[1], vocabulary[0]
    lines = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    merges = [line for line in lines if line and not line.startswith("#")]
    return ByteLevelBpeTokenizer(vocabulary, merges, **options)


def test_hard_cases_give_the_tokenizers_ids_eager_and_in_a_graph(bpe_folder):
    texts = HARD_CASES + BPE_CASES
    tokenizer = ours_of(bpe_folder)
    expected = theirs(bpe_folder, texts)
    assert as_theirs(tokenizer(tf.constant(texts)).numpy()) == expected
    graph = tf.function(tokenizer, input_signature=[tf.TensorSpec((None,), tf.string)])
    assert as_theirs(graph(tf.constant(texts)).numpy()) == expected
    # Not trivially equal: the merges joined bytes into longer pieces.
    assert sum(len(row) for row in expected) < sum(len(t.encode()) + 2 for t in texts) * 0.85


@pytest.mark.parametrize("cap", [None, 7, 12, 30])
def test_pairs_are_s_a_ss_b_s_and_the_cap_is_shared_longest_first(bpe_folder, cap):
    tokenizer = ours_of(bpe_folder, pairs=True, sequence_length=cap)
    ours = tokenizer(tf.constant([join_pair(a, b) for a, b in PAIRS])).numpy()
    expected = theirs(bpe_folder, PAIRS, cap)
    assert as_theirs(ours) == expected
    assert expected[0][:1] == [0] and expected[0].count(2) == 3  # <s> a </s></s> b </s>
    if cap:
        assert ours.shape == (len(PAIRS), cap)


def test_singles_are_cut_so_that_the_end_stays_last(bpe_folder):
    tokenizer = ours_of(bpe_folder, sequence_length=6)
    texts = ["The film was very good!", "bad"]
    assert as_theirs(tokenizer(tf.constant(texts)).numpy()) == theirs(bpe_folder, texts, 6)


def test_padding_is_id_0_and_the_vocabulary_names_our_ids(bpe_folder):
    tokenizer = ours_of(bpe_folder, sequence_length=8)
    ids = tokenizer(tf.constant(["good"])).numpy()[0]
    vocabulary = tokenizer.get_vocabulary()
    assert vocabulary[:4] == ["<pad>", "<s>", "</s>", "<unk>"]
    reference = Tokenizer.from_file(str(bpe_folder / "tokenizer.json")).encode("good")
    assert [vocabulary[i] for i in ids if i] == reference.tokens == ["<s>", "go", "od", "</s>"]
    assert ids[-1] == 0


def test_saved_in_a_model_it_reloads_in_safe_mode(bpe_folder, tmp_path):
    text = keras.Input(shape=(), dtype="string")
    model = keras.Model(text, ours_of(bpe_folder, sequence_length=12, pairs=True)(text))
    model.save(tmp_path / "bpe.keras")
    reloaded = keras.saving.load_model(tmp_path / "bpe.keras", safe_mode=True)
    texts = tf.constant(["  both  ", join_pair("a  b", "films")])
    np.testing.assert_array_equal(reloaded(texts), model(texts))
    assert reloaded.layers[-1].get_config()["pairs"] is True
