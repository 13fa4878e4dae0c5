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
    # Two tokens each: the batch is as long as its longest text, not the cap of 4.
    assert token_ids.shape == (4, 2) and token_ids.dtype == "int64"
    assert labels.shape == (4,) and labels.dtype == "int64"
    assert np.all(token_ids.numpy() > 0)


def test_evaluation_splits_keep_their_order(splits, vectorizer):
    pipelines = make_pipelines(splits, vectorizer, batch_size=4, seed=0)
    labels = np.concatenate([labels for _, labels in pipelines["validation"].as_numpy_iterator()])
    assert labels.tolist() == [0, 1, 2, 0, 1]
    expected = vectorizer(TEXTS[:3]).numpy()[:, :2]
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


def test_batches_are_padded_to_their_longest_text_and_bucketed_by_length():
    # Lengths 1 to 60 words, cap 48: train batches group similar lengths.
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 61, size=200)
    texts = np.array([" ".join(["w"] * int(n)) for n in lengths], dtype=object)
    labels = np.arange(200) % 2
    splits = TextSplits(train=(texts, labels), validation=(texts[:50], labels[:50]),
                        test=(texts[:7], labels[:7]), class_names=["a", "b"])
    vectorizer = make_vectorizer(TextConfig(vocabulary_size=5, sequence_length=48), texts)
    pipelines = make_pipelines(splits, vectorizer, batch_size=16, seed=0)

    batches = list(pipelines["train"].as_numpy_iterator())
    assert len(batches) == int(pipelines["train"].cardinality())
    assert sum(len(batch_labels) for _, batch_labels in batches) == 200
    real, padded = 0, 0
    for token_ids, _ in batches:
        batch_lengths = (token_ids != 0).sum(axis=1)
        assert token_ids.shape[1] == batch_lengths.max() <= 48  # No column of padding only.
        real, padded = real + batch_lengths.sum(), padded + token_ids.size
    # Bucketing: far less padding than a batch of random lengths has (about a third).
    assert real / padded > 0.8
    # Evaluation batches keep their order and are padded to their own longest text.
    test_ids = [ids for ids, _ in pipelines["test"].as_numpy_iterator()]
    assert [ids.shape[1] for ids in test_ids] == [min(lengths[:7].max(), 48)]


def test_pad_to_cap_keeps_every_text_at_the_cap_for_models_that_see_padding(splits, vectorizer):
    pipelines = make_pipelines(splits, vectorizer, batch_size=4, seed=0, pad_to_cap=True)
    shapes = {ids.shape for split in pipelines for ids, _ in pipelines[split].as_numpy_iterator()}
    assert shapes == {(4, 4), (2, 4), (1, 4), (3, 4)}  # Full and last batches, all at the cap.
    assert [int(pipelines[split].cardinality()) for split in pipelines] == [3, 2, 1]
