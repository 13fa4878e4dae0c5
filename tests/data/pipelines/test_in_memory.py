import keras
import numpy as np
import pytest
import tensorflow as tf

from config import TextConfig
from data import TextSplits, make_pipelines
from tokenization import make_vectorizer

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


def test_evaluation_splits_give_each_text_once_with_its_label_in_a_fixed_order():
    # Texts of 1 to 40 words, with their length as label: batched by length, not in order.
    lengths = np.array([40, 1, 17, 2, 32, 16, 33, 3, 18, 1])
    texts = np.array([" ".join([f"w{n}"] * n) for n in lengths], dtype=object)
    splits = TextSplits(
        train=(texts, lengths),
        validation=(texts, lengths),
        test=(texts[:3], lengths[:3]),
        class_names=["a"],
    )
    vectorizer = make_vectorizer(TextConfig(vocabulary_size=50, sequence_length=48), texts)
    validation = make_pipelines(splits, vectorizer, batch_size=2, seed=0)["validation"]

    def batches():
        return [(ids, labels) for ids, labels in validation.as_numpy_iterator()]

    first = batches()
    assert len(first) == int(validation.cardinality())
    labels = np.concatenate([batch_labels for _, batch_labels in first])
    assert sorted(labels.tolist()) == sorted(lengths.tolist())
    assert labels.tolist() != lengths.tolist()  # Length buckets, not the split's order.
    for ids, batch_labels in first:
        assert np.array_equal((ids != 0).sum(axis=1), batch_labels)  # Labels travel along.
        # Buckets of lengths 1-16, 17-32, 33-48: a batch is padded by under 16 tokens.
        assert len({(length - 1) // 16 for length in batch_labels}) == 1
        assert ids.shape[1] == batch_labels.max()
    again = batches()
    assert len(again) == len(first)
    assert all(
        np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(first, again)
    )


def test_evaluation_splits_can_keep_their_order(splits, vectorizer):
    pipelines = make_pipelines(splits, vectorizer, batch_size=4, seed=0, evaluation_buckets=False)
    labels = np.concatenate([labels for _, labels in pipelines["validation"].as_numpy_iterator()])
    assert labels.tolist() == [0, 1, 2, 0, 1]
    expected = vectorizer(TEXTS[:3]).numpy()[:, :2]
    token_ids = np.concatenate([ids for ids, _ in pipelines["test"].as_numpy_iterator()])
    assert np.array_equal(token_ids, expected)


def test_the_first_epoch_gets_the_first_seeded_order(splits, vectorizer):
    # Counting the lengths must not draw a shuffle order (a resume replays the orders).
    # All texts are two tokens long: one bucket, so batches keep the shuffled order.
    train = make_pipelines(splits, vectorizer, batch_size=4, seed=7)["train"]
    first_ids = vectorizer(TEXTS).numpy()[:, 0].tolist()
    order = [first_ids.index(token) for ids, _ in train.as_numpy_iterator() for token in ids[:, 0]]
    shuffled = tf.data.Dataset.range(10).shuffle(10, seed=7, reshuffle_each_iteration=True)
    assert order == list(shuffled.as_numpy_iterator())


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
    splits = TextSplits(
        train=(texts, labels),
        validation=(texts[:50], labels[:50]),
        test=(texts[:7], labels[:7]),
        class_names=["a", "b"],
    )
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
    # Evaluation batches are padded to their own longest text, bucketed more narrowly.
    test_ids = [ids for ids, _ in pipelines["test"].as_numpy_iterator()]
    assert max(ids.shape[1] for ids in test_ids) == min(lengths[:7].max(), 48)
    assert sum(len(ids) for ids in test_ids) == 7
    validation_ids = [ids for ids, _ in pipelines["validation"].as_numpy_iterator()]
    real = sum((ids != 0).sum() for ids in validation_ids)
    # 57% in the split's order; the partial batches of three buckets hold it below 80%.
    assert real / sum(ids.size for ids in validation_ids) > 0.75


def test_pad_to_cap_keeps_every_text_at_the_cap_for_models_that_see_padding(splits, vectorizer):
    pipelines = make_pipelines(splits, vectorizer, batch_size=4, seed=0, pad_to_cap=True)
    shapes = {ids.shape for split in pipelines for ids, _ in pipelines[split].as_numpy_iterator()}
    assert shapes == {(4, 4), (2, 4), (1, 4), (3, 4)}  # Full and last batches, all at the cap.
    assert [int(pipelines[split].cardinality()) for split in pipelines] == [3, 2, 1]
