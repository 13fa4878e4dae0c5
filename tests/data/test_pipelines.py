import keras
import numpy as np
import pytest
import tensorflow as tf

from config import TextConfig
from data import TextSplits, make_pipelines, make_vectorizer

TEXTS = np.array([f"word{index} shared" for index in range(10)], dtype=object)


@pytest.fixture(scope="module")
def splits():
    return TextSplits(
        train=(TEXTS, np.arange(10) % 3),
        validation=(TEXTS[:5], np.arange(5) % 3),
        test=(TEXTS[:3], np.zeros(3)),
        class_names=["a", "b", "c"],
    )


@pytest.fixture(scope="module")
def vectorizer(splits):
    return make_vectorizer(TextConfig(vocabulary_size=20, sequence_length=4), splits.train[0])


def test_elements_are_token_ids_and_labels(splits, vectorizer):
    pipelines = make_pipelines(splits, vectorizer, batch_size=4, seed=0)
    assert list(pipelines) == ["train", "validation", "test"]
    assert [int(pipelines[split].cardinality()) for split in pipelines] == [3, 2, 1]
    token_ids, labels = next(iter(pipelines["validation"]))
    assert token_ids.shape == (4, 4) and token_ids.dtype == "int64"
    assert labels.shape == (4,) and labels.dtype == "int64"
    # Two tokens then padding; the vectoriser ran inside tf.data.
    assert np.all(token_ids.numpy()[:, 2:] == 0) and np.all(token_ids.numpy()[:, :2] > 0)


def test_evaluation_splits_keep_their_order(splits, vectorizer):
    pipelines = make_pipelines(splits, vectorizer, batch_size=4, seed=0)
    labels = np.concatenate([labels for _, labels in pipelines["validation"].as_numpy_iterator()])
    assert labels.tolist() == [0, 1, 2, 0, 1]
    expected = vectorizer(TEXTS[:3]).numpy()
    token_ids = np.concatenate([ids for ids, _ in pipelines["test"].as_numpy_iterator()])
    assert np.array_equal(token_ids, expected)


def test_train_reshuffles_each_epoch_deterministically(splits, vectorizer):
    def first_tokens(seed, num_epochs):
        # Each text starts with its own word, so the first token id names the text.
        train = make_pipelines(splits, vectorizer, batch_size=4, seed=seed)["train"]
        return [
            np.concatenate([ids[:, 0] for ids, _ in train.as_numpy_iterator()]).tolist()
            for _ in range(num_epochs)
        ]

    epochs = first_tokens(seed=7, num_epochs=3)
    assert sorted(epochs[0]) == sorted(vectorizer(TEXTS).numpy()[:, 0].tolist())
    assert epochs[0] != epochs[1] and epochs[1] != epochs[2]
    assert first_tokens(seed=7, num_epochs=3) == epochs
    assert first_tokens(seed=8, num_epochs=1)[0] != epochs[0]


def test_pipelines_train_under_mirrored_strategy(splits, vectorizer):
    # The reason the vectoriser runs in tf.data: the model only ever sees int64 ids.
    pipelines = make_pipelines(splits, vectorizer, batch_size=4, seed=0)
    with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
        model = keras.Sequential(
            [
                keras.Input(shape=(4,), dtype="int64"),
                keras.layers.Embedding(20, 8, mask_zero=True),
                keras.layers.GlobalAveragePooling1D(),
                keras.layers.Dense(3),
            ]
        )
        model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(True))
    history = model.fit(
        pipelines["train"], validation_data=pipelines["validation"], shuffle=False, verbose=0
    )
    assert np.isfinite(history.history["val_loss"][0])
