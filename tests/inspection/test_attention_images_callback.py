import io

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from inspection.attention_images_callback import AttentionImagesCallback
from inspection.heatmaps import attention_image_size
from tests.inspection.stand_in_model import build_stand_in_models


def read_images(log_dir):
    images = {}
    for event_file in sorted(log_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(event_file)):
            for value in event.summary.value:
                assert value.metadata.plugin_data.plugin_name == "images"
                width, height, png = tf.make_ndarray(value.tensor)
                images[(value.tag, event.step)] = (int(width), int(height), png)
    return images


def test_writes_one_grid_image_per_example_and_epoch(tmp_path):
    _, classifier, attention_model, vectorizer = build_stand_in_models(sequence_length=8)
    texts = ["the film was good", "i hated it", "boring plot"]
    token_ids = vectorizer(tf.constant(texts)).numpy()  # (3, 8)
    callback = AttentionImagesCallback(
        tmp_path, token_ids[:2], attention_model_builder=lambda model: attention_model,
        vocabulary=vectorizer.get_vocabulary(),
    )
    classifier.compile(optimizer="adam", loss="sparse_categorical_crossentropy", run_eagerly=True)
    classifier.fit(token_ids, np.array([1, 0, 0]), epochs=2, verbose=0, callbacks=[callback])

    images = read_images(tmp_path)
    assert sorted(images) == [("attention/0", 0), ("attention/0", 1),
                              ("attention/1", 0), ("attention/1", 1)]
    width, height, png = images[("attention/1", 1)]
    # 2 layers x 2 heads over the 3 real tokens of "i hated it".
    assert (width, height) == attention_image_size(2, 2, 3, 3)
    assert Image.open(io.BytesIO(png)).size == (width, height)


def test_needs_exactly_one_model_source(tmp_path):
    with pytest.raises(ValueError, match="exactly one of attention_model"):
        AttentionImagesCallback(tmp_path, np.ones((1, 4), "int32"))


def test_rejects_non_integer_token_ids(tmp_path):
    with pytest.raises(ValueError, match="dtype=float"):
        AttentionImagesCallback(tmp_path, np.ones((1, 4)), attention_model=object())
