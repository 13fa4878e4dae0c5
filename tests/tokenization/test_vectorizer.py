import numpy as np
import pytest

from config import ConfigError, TextConfig
from tokenization import make_vectorizer

TRAIN = np.array(["the cat sat", "the cat ran", "the dog"], dtype=object)


def test_ids_by_train_frequency_padding_zero_and_unknown_one():
    vectorizer = make_vectorizer(TextConfig(vocabulary_size=10, sequence_length=5), TRAIN)
    assert vectorizer.get_vocabulary()[:4] == ["", "[UNK]", "the", "cat"]
    # "bird" appears only outside train, so it is out of vocabulary.
    ids = vectorizer(np.array(["The cat, bird!"], dtype=object)).numpy()
    assert ids.tolist() == [[2, 3, 1, 0, 0]]
    assert ids.dtype == np.int64


def test_truncation_keeps_the_first_tokens():
    vectorizer = make_vectorizer(TextConfig(vocabulary_size=10, sequence_length=2), TRAIN)
    assert vectorizer(np.array(["cat the dog"], dtype=object)).numpy().tolist() == [[3, 2]]


def test_vocabulary_size_counts_padding_and_unknown():
    vectorizer = make_vectorizer(TextConfig(vocabulary_size=4, sequence_length=3), TRAIN)
    assert len(vectorizer.get_vocabulary()) == 4


def test_standardize_none_keeps_case():
    vectorizer = make_vectorizer(TextConfig(sequence_length=2, standardize="none"), ["The The the"])
    assert vectorizer(np.array(["the The"], dtype=object)).numpy().tolist() == [[3, 2]]


@pytest.mark.parametrize(
    "values, message",
    [
        ({"vocabulary_size": 2}, "text.vocabulary_size: must be at least 3"),
        ({"sequence_length": 0}, "text.sequence_length: must be a positive integer or auto"),
        ({"standardize": "lowercase"}, "text.standardize: must be one of"),
        ({"max_len": 8}, "text.max_len: unknown key"),
    ],
)
def test_a_plain_mapping_is_checked_as_the_config_section_is(values, message):
    with pytest.raises(ConfigError, match=message):
        make_vectorizer(values, TRAIN)


def test_auto_sequence_length_is_the_99th_percentile_rounded_up_to_8():
    # 100 texts of 1 to 100 words: the 99th percentile is 99.01 -> 104.
    texts = np.array([" ".join(["w"] * n) for n in range(1, 101)], dtype=object)
    vectorizer = make_vectorizer({"vocabulary_size": 5}, texts)
    assert vectorizer.get_config()["output_sequence_length"] == 104
    assert vectorizer(np.array(["w " * 200], dtype=object)).shape == (1, 104)
    # Within bounds: never under 8, never over 512.
    assert make_vectorizer({}, ["a"]).get_config()["output_sequence_length"] == 8
    long_texts = np.array(["w " * 1000] * 3, dtype=object)
    assert make_vectorizer({}, long_texts).get_config()["output_sequence_length"] == 512
