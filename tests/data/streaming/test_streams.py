"""The streaming path against the in-memory one on small sharded inputs: the same splits,
classes, vocabulary and cap; workers' shares; labels given; errors before training."""

import numpy as np
import pytest
import tensorflow_datasets as tfds

from data import DataError, build_datasets
from tests.data.shards import review_rows, write_rows, write_shards

pytestmark = pytest.mark.slow  # TFDS's datasets streamed, and files of shards

TEXT = {"vocabulary_size": 200}


def contents(data):
    """{split: sorted (text, label id) pairs} of a streamed or in-memory Datasets."""
    if data.streams is None:
        return {
            split: sorted(zip(*(values.tolist() for values in getattr(data.splits, split))))
            for split in ("train", "validation", "test")
        }
    return {
        split: sorted(
            (text.decode(), int(label))
            for text, label in data.streams.examples(split).as_numpy_iterator()
        )
        for split in ("train", "validation", "test")
    }


def both(dataset, text=TEXT, **kwargs):
    """(streamed, in memory) Datasets of the same `dataset` section, hash-split."""
    dataset = {"split_method": "hash", **dataset}
    return [
        build_datasets({**dataset, "streaming": streaming}, text, 16, seed=0, **kwargs)
        for streaming in (True, False)
    ]


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_shards_stream_the_splits_and_vocabulary_memory_reads(tmp_path, suffix):
    rows = review_rows(300)
    write_shards(tmp_path / "shards", rows, 3, suffix)
    streamed, in_memory = both(
        {"train_file": str(tmp_path / "shards")}, {**TEXT, "sequence_length": "auto"}
    )
    assert streamed.streaming and not in_memory.streaming
    assert contents(streamed) == contents(in_memory)
    sizes = {split: len(pairs) for split, pairs in contents(streamed).items()}
    assert sizes == {"train": 239, "validation": 28, "test": 33}
    assert streamed.streams.rows == sizes  # counted in the one pass before training
    assert streamed.class_names == in_memory.class_names == ["neg", "pos"]
    assert streamed.vectorizer.get_vocabulary() == in_memory.vectorizer.get_vocabulary()
    assert streamed.sequence_length == in_memory.sequence_length == 8
    assert streamed.train_steps == 15  # ceil(239 / 16)


def test_a_glob_a_folder_and_one_file_give_the_same_rows(tmp_path):
    rows = review_rows(120)
    write_rows(tmp_path / "all.csv", rows)
    write_shards(tmp_path / "shards", rows[::-1], 4)  # other files, other order
    glob, folder, single = (
        contents(build_datasets({"train_file": spec, "streaming": True}, TEXT, 16, seed=0))
        for spec in (
            str(tmp_path / "shards" / "part-*.csv"),
            str(tmp_path / "shards"),
            str(tmp_path / "all.csv"),
        )
    )
    assert glob == folder == single


def test_the_training_stream_is_batched_by_length_and_endless(tmp_path):
    write_shards(tmp_path / "shards", review_rows(100), 2)
    data = build_datasets(
        {"train_file": str(tmp_path / "shards"), "streaming": True, "shuffle_buffer": 10},
        TEXT,
        16,
        seed=0,
    )
    batches = list(data.pipelines["train"].take(3 * data.train_steps))
    assert len(batches) == 3 * data.train_steps  # more than there are rows: it repeats
    token_ids, labels = batches[0]
    assert token_ids.shape == (16, 4) and labels.dtype == "int64"


def test_a_sample_covering_everything_gives_the_full_vocabulary(tmp_path):
    rows = [{"text": f"word{index} common{index % 7}", "label": index % 2} for index in range(400)]
    write_shards(tmp_path / "shards", rows, 2, ".parquet")
    dataset = {"train_file": str(tmp_path / "shards"), "validation_file": None}
    full, _ = both(dataset, {"vocabulary_size": 1000, "adapt_sample": 400})
    assert len(full.vectorizer.get_vocabulary()) == 2 + 7 + len(contents(full)["train"])
    sampled, in_memory = both(dataset, {"vocabulary_size": 1000, "adapt_sample": 100})
    # About 100 texts: 2 special tokens, common0..common6 and one word per sampled text.
    assert 60 < len(sampled.vectorizer.get_vocabulary()) - 9 < 140
    assert sampled.vectorizer.get_vocabulary() == in_memory.vectorizer.get_vocabulary()


def test_tfds_splits_stream_through_as_dataset(builtin_data_dir):
    streamed, in_memory = both({"name": "bbc_news", "data_dir": builtin_data_dir})
    assert streamed.class_names == in_memory.class_names
    assert contents(streamed)["test"] == contents(in_memory)["test"]
    assert streamed.streams.rows == {"train": 1701, "validation": 213, "test": 213}
    assert streamed.vectorizer.get_vocabulary() == in_memory.vectorizer.get_vocabulary()


def test_a_tfds_catalog_split_is_carved_by_hash_as_in_memory(tmp_path):
    with tfds.testing.mock_data(num_examples=40):
        streamed, in_memory = both({"tfds_name": "imdb_reviews", "data_dir": str(tmp_path)})
        assert contents(streamed) == contents(in_memory)
        assert {split: len(pairs) for split, pairs in contents(streamed).items()} == {
            "train": 35,
            "validation": 5,
            "test": 40,
        }
    # ClassLabel names the classes, so no pass counts the rows: 10% of 40 estimated.
    assert streamed.streams.rows == {"train": 36, "validation": 4, "test": 40}


@pytest.mark.parametrize("shards", [4, 1])  # by files, or by rows of each record batch
def test_two_workers_read_disjoint_shares(tmp_path, shards):
    write_shards(tmp_path / "shards", review_rows(200), shards)
    data = build_datasets(
        {"train_file": str(tmp_path / "shards"), "streaming": True}, TEXT, 16, seed=0
    )
    train = {text for text, _ in contents(data)["train"]}
    shares = [
        {
            text.decode()
            for text, _ in data.streams.examples("train", worker=(index, 2)).as_numpy_iterator()
        }
        for index in range(2)
    ]
    assert not shares[0] & shares[1] and shares[0] | shares[1] == train
    assert abs(len(shares[0]) - len(shares[1])) < 16  # of about 78 each


def test_given_labels_skip_the_pass_and_a_stranger_is_named_mid_stream(tmp_path):
    rows = review_rows(60)
    rows[45]["label"] = "neutral"
    write_rows(tmp_path / "train.csv", rows)
    data = build_datasets(
        {"train_file": str(tmp_path / "train.csv"), "streaming": True, "labels": ["neg", "pos"]},
        TEXT,
        16,
        seed=0,
    )
    assert not data.streams.counted and data.streams.rows["train"] == 48  # estimated
    # tf.data raises an OpError carrying a traceback; the DataError is what is named.
    with pytest.raises(
        DataError,
        match=r"train\.csv row 46 \(line 47\) column 'label': label "
        r"'neutral' is not in dataset\.labels \(neg, pos\); fix "
        "the label or add it to dataset.labels$",
    ):
        with data.stream_errors_named():
            contents(data)


def test_errors_before_training(tmp_path):
    write_shards(tmp_path / "shards", review_rows(40), 2, ".parquet")
    (tmp_path / "shards" / "part-1.parquet").write_bytes(b"truncated")
    with pytest.raises(DataError, match=r"part-1\.parquet could not be read as parquet"):
        build_datasets({"train_file": str(tmp_path / "shards"), "streaming": True}, TEXT, 16, 0)
    rows = review_rows(40)
    write_rows(tmp_path / "train.csv", rows)
    write_rows(tmp_path / "test.csv", rows[:3] + [{"text": "so so", "label": "mixed"}])
    with pytest.raises(
        DataError,
        match=r"test\.csv row 4 \(line 5\) column 'label': label "
        "'mixed' is not in the training labels",
    ):
        build_datasets(
            {
                "train_file": str(tmp_path / "train.csv"),
                "streaming": True,
                "test_file": str(tmp_path / "test.csv"),
            },
            TEXT,
            16,
            0,
        )
    write_rows(tmp_path / "one.csv", [{"text": f"t {index}", "label": "a"} for index in range(9)])
    with pytest.raises(DataError, match="every training example has the label 'a'"):
        build_datasets({"train_file": str(tmp_path / "one.csv"), "streaming": True}, TEXT, 16, 0)


def test_first_texts_come_in_the_split_order(tmp_path):
    write_rows(tmp_path / "train.csv", review_rows(50))
    write_rows(tmp_path / "validation.csv", review_rows(5, start=100))
    data = build_datasets(
        {
            "train_file": str(tmp_path / "train.csv"),
            "streaming": True,
            "validation_file": str(tmp_path / "validation.csv"),
        },
        TEXT,
        16,
        0,
    )
    np.testing.assert_array_equal(
        data.first_texts("validation", 2), ["review 100 awful dull", "review 101 great fine"]
    )
