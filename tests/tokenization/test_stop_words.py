import string

import keras
import numpy as np
import pytest
import tensorflow as tf

from config import ConfigError, ModelConfig, TextConfig
from models import build_classifier, build_end_to_end_model, load_end_to_end_model
from tokenization import make_vectorizer
from tokenization.stop_words import lower_strip_punctuation_drop_stop_words

STOP_WORDS = TextConfig(vocabulary_size=20, sequence_length=4, stop_words="english")


def standardize(*texts):
    return [
        text.decode()
        for text in lower_strip_punctuation_drop_stop_words(tf.constant(texts)).numpy()
    ]


def test_whole_tokens_only_and_runs_of_them():
    # "then", "an", "of" and "the" are stop words; "theory", "thesis" and "anthem" only
    # start or end like one.
    assert standardize("Then the theory of an anthem, thesis!") == [" theory anthem thesis "]
    assert standardize("the of the  an\tcat", "the", "") == [" cat ", " ", "  "]


def test_punctuation_goes_first_as_in_keras_standardisation():
    # "isn't" becomes "isnt" (kept); "(the)" becomes "the" (dropped), as Keras strips.
    assert standardize("It isn't (the) end.") == [" isnt end "]
    # On text without stop words, the same tokens as Keras' lower_and_strip_punctuation.
    text = "Cat" + "".join(f"{mark}dog{mark} " for mark in string.punctuation) + "ÉLAN"
    keras_tokens = keras.layers.TextVectorization(output_mode="int")
    keras_tokens.adapt([text])
    ours = keras.layers.TextVectorization(
        output_mode="int", standardize=lower_strip_punctuation_drop_stop_words
    )
    ours.adapt([text])
    assert ours.get_vocabulary() == keras_tokens.get_vocabulary()
    assert len(ours.get_vocabulary()) > 3  # Not everything in one token.


def test_the_vectorizer_never_sees_stop_words_and_caps_what_is_left():
    vectorizer = make_vectorizer(STOP_WORDS, ["the cat and the dog", "a cat"])
    assert vectorizer.get_vocabulary() == ["", "[UNK]", "cat", "dog"]
    ids = vectorizer(np.array(["The dog, the cat and a bird", "of"], dtype=object)).numpy()
    assert ids.tolist() == [[3, 2, 1, 0], [0, 0, 0, 0]]


def test_auto_length_counts_the_words_that_are_left():
    texts = ["the of and " * 20 + "cat " * n for n in range(1, 101)]
    vectorizer = make_vectorizer(TextConfig(stop_words="english"), texts)
    assert vectorizer.get_config()["output_sequence_length"] == 104  # 99th pct 99.01


def test_saved_model_reloads_in_safe_mode_and_still_drops_them(tmp_path):
    vectorizer = make_vectorizer(STOP_WORDS, ["a good film", "the bad film"])
    config = ModelConfig(d_model=8, num_heads=2, num_layers=1, intermediate_dim=8)
    model = build_end_to_end_model(
        vectorizer, build_classifier(config, 20, sequence_length=4, num_classes=2)
    )
    model.save(tmp_path / "model.keras")
    loaded = load_end_to_end_model(tmp_path / "model.keras")
    texts = np.array(["the good film", "good film", "a bad, bad film of the year"])
    np.testing.assert_array_equal(loaded(texts), model(texts))
    # With stop words dropped, "the good film" is "good film".
    np.testing.assert_array_equal(loaded(texts)[0], loaded(texts)[1])
    film = vectorizer.get_vocabulary().index("film")
    loaded_vectorizer = loaded.get_layer("text_vectorization")
    assert loaded_vectorizer(["the film"]).numpy().tolist() == [[film, 0, 0, 0]]


def test_the_end_to_end_model_renames_a_vectorizer_and_keeps_its_function():
    vectorizer = make_vectorizer(STOP_WORDS, ["a good film"])
    renamed = keras.layers.TextVectorization(
        output_sequence_length=4,
        standardize=lower_strip_punctuation_drop_stop_words,
        name="my_vectorizer",
        vocabulary=vectorizer.get_vocabulary()[2:],
    )
    config = ModelConfig(d_model=8, num_heads=2, num_layers=1, intermediate_dim=8)
    model = build_end_to_end_model(
        renamed, build_classifier(config, 20, sequence_length=4, num_classes=2)
    )
    inside = model.get_layer("text_vectorization")
    assert inside.get_config()["standardize"] is lower_strip_punctuation_drop_stop_words
    assert inside(["the good film"]).numpy().tolist() == vectorizer(["good film"]).numpy().tolist()


def test_other_standardisations_are_refused():
    with pytest.raises(
        ConfigError,
        match="text.stop_words: english needs text.standardize: "
        "lower_and_strip_punctuation, got 'lower'",
    ):
        TextConfig(stop_words="english", standardize="lower")
