import numpy as np
import pytest
import tensorflow as tf

from inspection.rendering.attention_images_callback import AttentionImagesCallback
from inspection.rendering.heatmaps import attention_image_size, render_attention_png
from tests.helpers import read_images
from tests.inspection.stand_in_model import build_stand_in_models


def test_writes_one_grid_image_per_example_and_epoch(tmp_path):
    _, classifier, vectorizer = build_stand_in_models(sequence_length=8)
    texts = ["the film was good", "i hated it", "boring plot"]
    token_ids = vectorizer(tf.constant(texts)).numpy()  # (B, T) = (3, 8)
    callback = AttentionImagesCallback(
        tmp_path,
        token_ids[:2],
        classifier,
        vocabulary=vectorizer.get_vocabulary(),
    )
    classifier.compile(optimizer="adam", loss="sparse_categorical_crossentropy", run_eagerly=True)
    classifier.fit(token_ids, np.array([1, 0, 0]), epochs=2, verbose=0, callbacks=[callback])

    images = read_images(tmp_path)
    assert sorted(images) == [
        ("attention/0", 0),
        ("attention/0", 1),
        ("attention/1", 0),
        ("attention/1", 1),
    ]
    height, width = images[("attention/1", 1)].shape[:2]
    # 2 layers x 2 heads over the 3 real tokens of "i hated it".
    assert (width, height) == attention_image_size(2, 2, 3, 3)


def test_class_token_and_max_tokens_keep_the_first_real_positions(tmp_path):
    token_ids = np.array([[5, 6, 7, 0]])  # (B, T)
    # Per layer (B, N, T + 1, T + 1): a class token at position 0, every weight different.
    layer_scores = [np.arange(25.0).reshape(1, 1, 5, 5) + 100 * layer for layer in range(2)]

    def classifier(token_ids, training=False, return_attention_scores=False, **kwargs):
        assert return_attention_scores and not training
        return {
            "probabilities": np.full((len(token_ids), 2), 0.5, "float32"),
            "attention_scores": layer_scores,
        }

    callback = AttentionImagesCallback(
        tmp_path,
        token_ids,
        classifier,
        vocabulary=["", "[UNK]", "the", "film", "was", "good"],
        max_tokens=3,
    )
    callback.on_train_begin()
    callback.on_epoch_end(0)
    callback.on_train_end()

    # "[CLS]" and the first two real tokens; id 6 is past the vocabulary, so shown as "6".
    tokens = ["[CLS]", "good", "6"]
    expected = render_attention_png(
        np.stack(layer_scores, axis=1)[0, :, :, :3, :3],
        tokens,
        tokens,
        [["layer 0 head 0"], ["layer 1 head 0"]],
        title="example 0, epoch 1",
    )
    np.testing.assert_array_equal(
        read_images(tmp_path)[("attention/0", 0)], tf.io.decode_png(expected).numpy()
    )


def test_rejects_non_integer_token_ids(tmp_path):
    with pytest.raises(ValueError, match="dtype=float"):
        AttentionImagesCallback(tmp_path, np.ones((1, 4)), object())
