import keras
import numpy as np
import pytest

from config import ModelConfig
from models import (
    build_classifier,
    build_end_to_end_model,
    get_model_parts,
    load_end_to_end_model,
    predict_texts,
)
from models.trim_padding import TrimPadding


def call(model, inputs):
    """Eager call: much faster than predict() for a handful of examples."""
    if isinstance(inputs, np.ndarray) and inputs.dtype == object:
        inputs = inputs.astype(str)
    return keras.tree.map_structure(np.asarray, model(inputs, training=False))


TEXTS = np.array(["a good film", "a bad bad film", "unknown words here"], dtype=object)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_saved_model_reloads_in_safe_mode_with_identical_predictions(tmp_path, pooling):
    vectorizer = keras.layers.TextVectorization(
        max_tokens=20, output_sequence_length=6, name="some_name"
    )
    vectorizer.adapt(["a good film", "a bad film"])
    config = ModelConfig(
        d_model=16,
        num_heads=2,
        num_layers=1,
        intermediate_dim=32,
        pooling=pooling,
        positional_encoding="learned",
    )
    classifier = build_classifier(config, 20, sequence_length=6, num_classes=2)
    model = build_end_to_end_model(vectorizer, classifier)
    path = tmp_path / "model.keras"
    model.save(path)

    loaded = load_end_to_end_model(path)
    np.testing.assert_array_equal(call(loaded, TEXTS), call(model, TEXTS))
    loaded_vectorizer, loaded_classifier = get_model_parts(loaded)
    assert loaded_vectorizer.name == "text_vectorization"
    assert loaded_vectorizer.get_vocabulary() == vectorizer.get_vocabulary()
    token_ids = loaded_vectorizer(TEXTS.astype(str))
    outputs = call(loaded_classifier, token_ids)
    np.testing.assert_allclose(outputs, call(model, TEXTS), rtol=1e-6, atol=1e-7)


def test_get_model_parts_names_what_is_missing():
    inputs = keras.Input((4,))
    with pytest.raises(ValueError, match="TransformerClassifier"):
        get_model_parts(keras.Model(inputs, keras.layers.Dense(2)(inputs)))


@pytest.mark.parametrize("pooling", ["mean", "max", "cls"])
def test_predictions_do_not_depend_on_the_batch_a_text_is_in(pooling):
    # The batch is cut to its longest text (TrimPadding), so a short text is computed at
    # a different padded length alone than beside a text longer than the cap.
    vectorizer = keras.layers.TextVectorization(max_tokens=30, output_sequence_length=8)
    vectorizer.adapt(["a good film with a fine plot", "a bad film"])
    config = ModelConfig(
        d_model=16, num_heads=2, num_layers=2, intermediate_dim=32, dropout=0.0, pooling=pooling
    )
    model = build_end_to_end_model(
        vectorizer, build_classifier(config, 30, sequence_length=8, num_classes=3)
    )
    texts = np.array(["good", "a bad film", " ".join(["fine plot"] * 10)], dtype=object)
    together = call(model, texts)
    alone = np.concatenate([call(model, texts[i : i + 1]) for i in range(3)])
    np.testing.assert_allclose(together, alone, rtol=1e-6, atol=1e-6)
    token_ids = call(model.layers[2], vectorizer(texts[:2].astype(str)))  # TrimPadding
    assert token_ids.shape == (2, 3)  # "a bad film": 3 tokens, not the cap of 8.


def test_predict_texts_gives_probabilities_in_the_order_of_the_texts():
    # Fed shortest first in batches of 2, they come back in the order given.
    keras.utils.set_random_seed(0)
    vectorizer = keras.layers.TextVectorization(max_tokens=30, output_sequence_length=8)
    vectorizer.adapt(["a good film with a fine plot", "a bad film"])
    config = ModelConfig(d_model=16, num_heads=2, num_layers=1, intermediate_dim=32, dropout=0.0)
    model = build_end_to_end_model(
        vectorizer, build_classifier(config, 30, sequence_length=8, num_classes=3)
    )
    texts = ["a good film with a fine plot", "bad", "a bad film", "good film", "plot"]
    probabilities = predict_texts(model, texts, batch_size=2)
    assert probabilities.shape == (5, 3) and probabilities.dtype == np.float32
    alone = np.concatenate([call(model, np.array([text], dtype=object)) for text in texts])
    np.testing.assert_allclose(probabilities, alone, rtol=1e-6, atol=1e-6)
    assert len({tuple(row) for row in probabilities.round(6)}) == 5  # Rows differ.
    assert predict_texts(model, []).shape == (0, 3)


def test_a_model_that_sees_padding_gets_texts_padded_to_the_cap():
    vectorizer = keras.layers.TextVectorization(max_tokens=20, output_sequence_length=6)
    vectorizer.adapt(["a good film", "a bad film"])
    config = ModelConfig(d_model=8, num_heads=2, num_layers=1, intermediate_dim=8, mask_zero=False)
    model = build_end_to_end_model(
        vectorizer,
        build_classifier(config, 20, sequence_length=6, num_classes=2),
        trim_padding=False,
    )
    assert not any(isinstance(layer, TrimPadding) for layer in model.layers)
