"""SentencePieceTokenizer: XLM-RoBERTa's ids as the `tokenizers` library gives them from the
tokenizer.json `transformers` saves (a tiny Unigram trained by `sentencepiece`), on hard
cases, pairs and caps, eager, in a graph, in a SavedModel and reloaded from `.keras`;
whether the model's bytes came from tokenizer.json or from sentencepiece.bpe.model."""

import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf
from tokenizers import Tokenizer

from data import DataError
from engine.training.starting_weights.checkpoints import read_checkpoint
from engine.training.starting_weights.sentencepiece_model import read_pieces
from engine.training.starting_weights.tokenizer_files import read_tokenizer
from tests.models.hf_reference import SPM_CORPUS, write_hf_checkpoint
from tests.tokenization.tokenizer_cases import BPE_CASES, HARD_CASES, as_theirs, theirs
from tokenization.pairs import join_pair

# What SentencePiece's normaliser and the Unigram lattice meet beyond the shared cases:
# NFKC folds, combining accents, scripts the tiny model half knows (unknown characters),
# text that is all spaces, and U+0085, which `tokenizers` splits at and NFKC keeps.
SPM_CASES = [
    "ﬁlm ＡＢＣ ① ½ ㎏ Ǆ",
    "cafe\u0301 café e\u0301 \u0301",
    "Фильм 映画 영화 ฟิล์ม ሰላም",
    "x\u0085y\u1680z\u2028w",
    " \t\n ",
    "``quoted'' and \"quoted\"",
    "▁ ▁▁x",
    *SPM_CORPUS[-15:],
]
PAIRS = [
    ("Der Film war gut!", "bad, bad plot"),
    ("a  b", "  trailing  "),
    ("", "only the second"),
    ("映画 " * 10, "short"),
    ("long side " * 12, "long side too " * 9),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_hf_checkpoint(tmp_path_factory.mktemp("xlmr"), "xlm-roberta")


def test_hard_cases_give_the_tokenizers_ids_eager_and_in_a_graph(folder):
    texts = HARD_CASES + BPE_CASES + SPM_CASES
    tokenizer = read_checkpoint(folder).tokenizer()
    expected = theirs(folder, texts)
    assert as_theirs(tokenizer(tf.constant(texts)).numpy()) == expected
    graph = tf.function(tokenizer, input_signature=[tf.TensorSpec((None,), tf.string)])
    assert as_theirs(graph(tf.constant(texts)).numpy()) == expected
    # Not trivially equal: pieces join characters, some are unknown, and U+0085 is a split.
    assert sum(len(row) for row in expected) < sum(len(t) + 2 for t in texts) * 0.85
    assert sum(3 in row for row in expected) >= 5
    assert tokenizer._kept_spaces == "[\\x{85}]"


def test_the_model_file_alone_gives_the_same_vocabulary_and_ids(folder, tmp_path):
    for name in ("config.json", "model.safetensors", "sentencepiece.bpe.model"):
        shutil.copy(folder / name, tmp_path / name)
    from_json, from_model = read_checkpoint(folder), read_checkpoint(tmp_path)
    assert from_model.vocabulary == from_json.vocabulary
    assert len(from_json.vocabulary) == 412 and from_json.vocabulary[-1] == "<mask>"
    texts = tf.constant(HARD_CASES + SPM_CASES)
    np.testing.assert_array_equal(from_model.tokenizer()(texts), from_json.tokenizer()(texts))
    # The model written from tokenizer.json holds the same pieces and scores.
    original, _ = read_pieces((folder / "sentencepiece.bpe.model").read_bytes())
    written, model_type = read_pieces(from_json.sentencepiece)
    assert model_type == "Unigram" and [p[:2] for p in written] == [p[:2] for p in original]


def test_the_two_differences_left(folder):
    """`tokenizers` reads "<mask>" typed in a text as the token, where ours splits it like
    any text; and its normaliser replaces a short grapheme cluster whose start the NFKC
    table maps by that start's form ("e" and two acute accents -> "é"), where SentencePiece
    (ours) keeps the second accent, as the model's own library does."""
    tokenizer = read_checkpoint(folder).tokenizer()
    ours = as_theirs(tokenizer(tf.constant(["<s> <mask>", "e\u0301\u0301"])).numpy())
    expected = theirs(folder, ["<s> <mask>", "e\u0301\u0301"])
    assert expected[0] == [0, 0, 411, 2] and 411 not in ours[0] and len(ours[0]) > 6
    assert ours[1] == expected[1][:-1] + [3, 2]  # ...é, <unk> (the second accent), </s>


@pytest.mark.parametrize("cap", [None, 7, 12, 30])
def test_pairs_are_s_a_ss_b_s_and_the_cap_is_shared_longest_first(folder, cap):
    tokenizer = read_checkpoint(folder).tokenizer(cap).for_pairs()
    ours = tokenizer(tf.constant([join_pair(a, b) for a, b in PAIRS])).numpy()
    expected = theirs(folder, PAIRS, cap)
    assert as_theirs(ours) == expected
    assert expected[0][:1] == [0] and expected[0].count(2) == 3  # <s> a </s></s> b </s>
    if cap:
        assert ours.shape == (len(PAIRS), cap)


def test_padding_is_id_0_and_the_vocabulary_names_our_ids(folder):
    tokenizer = read_checkpoint(folder).tokenizer(12)
    ids = tokenizer(tf.constant(["Der Film"])).numpy()[0]
    vocabulary = tokenizer.get_vocabulary()
    assert vocabulary[:4] == ["<pad>", "<s>", "</s>", "<unk>"]
    reference = Tokenizer.from_file(str(folder / "tokenizer.json")).encode("Der Film")
    assert [vocabulary[i] for i in ids if i] == reference.tokens
    assert reference.tokens[:3] == ["<s>", "▁D", "er"] and ids[-1] == 0


def test_saved_it_reloads_in_safe_mode_and_runs_in_a_saved_model(folder, tmp_path):
    text = keras.Input(shape=(), dtype="string")
    tokenizer = read_checkpoint(folder).tokenizer(12).for_pairs()
    model = keras.Model(text, tokenizer(text))
    model.save(tmp_path / "spm.keras")
    reloaded = keras.saving.load_model(tmp_path / "spm.keras", safe_mode=True)
    texts = tf.constant(["  Der Film  ", join_pair("a  b", "映画")])
    np.testing.assert_array_equal(reloaded(texts), model(texts))
    module = tf.Module()
    module.tokenizer = tokenizer
    module.serve = tf.function(tokenizer, input_signature=[tf.TensorSpec((None,), tf.string)])
    tf.saved_model.save(module, str(tmp_path / "saved"))
    np.testing.assert_array_equal(
        tf.saved_model.load(str(tmp_path / "saved")).serve(texts), model(texts)
    )


def test_a_model_file_that_is_no_unigram_model_is_one_line(folder, tmp_path):
    vocabulary, _ = read_tokenizer(folder, "SentencePiece")
    (tmp_path / "sentencepiece.bpe.model").write_bytes(b"\x0a\xff")
    with pytest.raises(DataError, match="is no SentencePiece model"):
        read_tokenizer(tmp_path, "SentencePiece")
    # A BPE model (TrainerSpec.model_type 2) is not XLM-R's.
    proto = (folder / "sentencepiece.bpe.model").read_bytes() + b"\x12\x02\x18\x02"
    (tmp_path / "sentencepiece.bpe.model").write_bytes(proto)
    with pytest.raises(DataError, match=r"is a BPE model .*Unigram") as error:
        read_tokenizer(tmp_path, "SentencePiece")
    assert "\n" not in str(error.value) and len(vocabulary) == 412
