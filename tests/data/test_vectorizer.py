import numpy as np
import pytest

from data import DataError, TextSpec, make_vectorizer

TRAIN = np.array(["the cat sat", "the cat ran", "the dog"], dtype=object)


def test_ids_by_train_frequency_padding_zero_and_unknown_one():
    vectorizer = make_vectorizer(TextSpec(vocabulary_size=10, sequence_length=5), TRAIN)
    assert vectorizer.get_vocabulary()[:4] == ["", "[UNK]", "the", "cat"]
    # "bird" appears only outside train, so it is out of vocabulary.
    ids = vectorizer(np.array(["The cat, bird!"], dtype=object)).numpy()
    assert ids.tolist() == [[2, 3, 1, 0, 0]]
    assert ids.dtype == np.int64


def test_truncation_keeps_the_first_tokens():
    vectorizer = make_vectorizer(TextSpec(vocabulary_size=10, sequence_length=2), TRAIN)
    assert vectorizer(np.array(["cat the dog"], dtype=object)).numpy().tolist() == [[3, 2]]


def test_vocabulary_size_counts_padding_and_unknown():
    vectorizer = make_vectorizer(TextSpec(vocabulary_size=4, sequence_length=3), TRAIN)
    assert len(vectorizer.get_vocabulary()) == 4


def test_standardize_none_keeps_case():
    vectorizer = make_vectorizer(TextSpec(sequence_length=2, standardize=None), ["The The the"])
    assert vectorizer(np.array(["the The"], dtype=object)).numpy().tolist() == [[3, 2]]


@pytest.mark.parametrize(
    "values, message",
    [
        ({"vocabulary_size": 2}, "Received: vocabulary_size=2"),
        ({"sequence_length": 0}, "Received: sequence_length=0"),
        ({"standardize": "lowercase"}, "Received: standardize='lowercase'"),
    ],
)
def test_text_spec_checks(values, message):
    with pytest.raises(DataError, match=message):
        TextSpec(**values)


def test_standardize_none_may_be_spelled_as_a_string():
    assert TextSpec(standardize="none").standardize is None


def test_text_spec_from_dict_rejects_unknown_keys():
    assert TextSpec.from_dict({"sequence_length": 8}).sequence_length == 8
    with pytest.raises(DataError, match="unknown text spec key 'max_len'"):
        TextSpec.from_dict({"max_len": 8})
