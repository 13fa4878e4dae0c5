"""WordPieceTokenizer: the ids of the `tokenizers` library, on hard cases and real text."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from tokenizers import Tokenizer

from tests.models.bert_reference import TINY_VOCABULARY, write_tokenizer_json
from tests.tokenization.tokenizer_cases import HARD_CASES
from tokenization import WordPieceTokenizer


def reference_ids(tokenizer_json, texts, cap=None):
    """[CLS] ... [SEP] ids of the `tokenizers` library, truncated to `cap` (no padding)."""
    reference = Tokenizer.from_file(str(tokenizer_json))
    reference.no_padding()
    if cap:
        reference.enable_truncation(cap)
    else:
        reference.no_truncation()
    return [encoding.ids for encoding in reference.encode_batch(texts)]


def our_ids(tokenizer, texts):
    return [
        [int(i) for i in row if i != 0]
        for row in tokenizer(tf.constant(texts, dtype=tf.string)).numpy()
    ]


@pytest.fixture(scope="module")
def tiny_tokenizer_json(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    write_tokenizer_json(path, TINY_VOCABULARY)
    return path


def test_hard_cases_give_the_reference_ids(tiny_tokenizer_json):
    tokenizer = WordPieceTokenizer(TINY_VOCABULARY)
    assert our_ids(tokenizer, HARD_CASES) == reference_ids(tiny_tokenizer_json, HARD_CASES)


@pytest.mark.slow
def test_minilm_vocabulary_on_hard_cases(minilm_folder):
    from engine.training.starting_weights.checkpoints import read_checkpoint

    tokenizer = read_checkpoint(minilm_folder).tokenizer()
    texts = HARD_CASES + ["word " * 700]
    assert our_ids(tokenizer, texts) == reference_ids(minilm_folder / "tokenizer.json", texts)


@pytest.mark.slow
def test_minilm_ids_on_500_texts_of_every_builtin_dataset(minilm_folder, builtin_data_dir):
    from data import BUILTIN_BUILDERS, load_text_splits
    from engine.training.starting_weights.checkpoints import read_checkpoint

    tokenizer = read_checkpoint(minilm_folder).tokenizer(sequence_length=512)
    for name in BUILTIN_BUILDERS:
        texts = [
            str(text)
            for text in load_text_splits({"name": name, "data_dir": builtin_data_dir}).train[0][
                :500
            ]
        ]
        ours = our_ids(tokenizer, texts)
        theirs = reference_ids(minilm_folder / "tokenizer.json", texts, cap=512)
        differing = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
        assert not differing, (name, texts[differing[0]][:200])


def test_the_cap_keeps_sep_last_and_pads_with_zeros():
    tokenizer = WordPieceTokenizer(TINY_VOCABULARY, sequence_length=5)
    ids = tokenizer(tf.constant(["the film was very good", "good"])).numpy()
    assert ids.tolist() == [[2, 9, 8, 10, 3], [2, 6, 3, 0, 0]]
    uncapped = WordPieceTokenizer(TINY_VOCABULARY)(tf.constant(["good", "the film"])).numpy()
    assert uncapped.tolist() == [[2, 6, 3, 0], [2, 9, 8, 3]]


def test_cased_checkpoints_keep_case_and_accents():
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "Café", "cafe"]
    cased = WordPieceTokenizer(vocabulary, lowercase=False)
    assert our_ids(cased, ["Café cafe CAFE"]) == [[2, 4, 5, 1, 3]]


def test_saved_in_a_model_it_reloads_in_safe_mode(tmp_path):
    text = keras.Input(shape=(), dtype="string")
    model = keras.Model(text, WordPieceTokenizer(TINY_VOCABULARY, sequence_length=6)(text))
    model.save(tmp_path / "tokenizer.keras")
    reloaded = keras.saving.load_model(tmp_path / "tokenizer.keras", safe_mode=True)
    texts = tf.constant(["Good films!", "cafe"])
    np.testing.assert_array_equal(reloaded(texts), model(texts))
    assert reloaded.layers[-1].get_config()["output_sequence_length"] == 6


@pytest.mark.parametrize(
    "vocabulary, message",
    [
        (["[UNK]", "[PAD]", "[CLS]", "[SEP]"], "must be id 0"),
        (["[PAD]", "[UNK]", "[CLS]"], "no \\[SEP\\] token"),
    ],
)
def test_a_vocabulary_without_the_special_tokens_is_refused(vocabulary, message):
    with pytest.raises(ValueError, match=message):
        WordPieceTokenizer(vocabulary)


def test_a_cap_without_room_for_cls_and_sep_is_refused():
    with pytest.raises(ValueError, match="Received: sequence_length=1"):
        WordPieceTokenizer(TINY_VOCABULARY, sequence_length=1)


def test_the_token_count_sees_past_the_cap():
    from tokenization.vectorizer import sequence_cap, token_counter

    tokenizer = WordPieceTokenizer(TINY_VOCABULARY, sequence_length=5)
    # [CLS] and [SEP] count in both: "the film was very good" is 7 ids, 2 past the cap.
    assert token_counter(tokenizer)(["the film was very good", "good"]).tolist() == [7, 3]
    assert sequence_cap(tokenizer) == 5
