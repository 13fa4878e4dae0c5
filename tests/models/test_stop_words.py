import keras
import numpy as np
import pytest
import tensorflow as tf

from config import ConfigError, ModelConfig, TextConfig
from data import make_vectorizer
from models import build_classifier, build_end_to_end_model, load_end_to_end_model
from models.stop_words import lower_strip_punctuation_drop_stop_words

STOP_WORDS = TextConfig(vocabulary_size=20, sequence_length=4, stop_words="english")


def standardize(*texts):
    return [text.decode() for text in
            lower_strip_punctuation_drop_stop_words(tf.constant(texts)).numpy()]


def test_whole_tokens_only_and_runs_of_them():
    # "then", "an", "of" and "the" are stop words; "theory", "thesis" and "anthem" only
    # start or end like one.
    assert standardize("Then the theory of an anthem, thesis!") == [" theory anthem thesis "]
    assert standardize("the of the  an\tcat", "the", "") == [" cat ", " ", "  "]


def test_punctuation_goes_first_as_in_keras_standardisation():
    # "isn't" becomes "isnt" (kept); "(the)" becomes "the" (dropped), as Keras strips.
    assert standardize("It isn't (the) end.") == [" isnt end "]
    keras_only = keras.layers.TextVectorization(output_mode="int")
    keras_only.adapt(["It isn't (the) end."])
    assert "isnt" in keras_only.get_vocabulary()


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
        vectorizer, build_classifier(config, 20, sequence_length=4, num_classes=2))
    model.save(tmp_path / "model.keras")
    loaded = load_end_to_end_model(tmp_path / "model.keras")
    texts = np.array(["the good film", "good film", "a bad, bad film of the year"])
    np.testing.assert_array_equal(loaded(texts), model(texts))
    # With stop words dropped, "the good film" is "good film".
    np.testing.assert_array_equal(loaded(texts)[0], loaded(texts)[1])
    film = vectorizer.get_vocabulary().index("film")
    loaded_vectorizer = loaded.get_layer("text_vectorization")
    assert loaded_vectorizer(["the film"]).numpy().tolist() == [[film, 0, 0, 0]]


def test_other_standardisations_are_refused():
    with pytest.raises(ConfigError, match="text.stop_words: needs text.standardize"):
        TextConfig(stop_words="english", standardize="lower")
