"""train.py on streamed input: a small sharded run end to end, a shard that cannot be read,
a bad row met mid-stream, and a resume (two workers: test_train_distributed.py)."""

import csv
import random

import numpy as np
import pandas as pd
import pytest

import train
from run_folder import runs, saved_run
from tests.helpers import TINY, metrics_of


def streamed_args(root, train_file, *overrides):
    return [
        "--config",
        TINY,
        "--set",
        "dataset.name=null",
        f"dataset.train_file={train_file}",
        "dataset.streaming=true",
        f"output.root={root}",
        *overrides,
    ]


@pytest.fixture(scope="module")
def review_shards(tmp_path_factory, data_file):
    """The reviews fixture in three Parquet shards."""
    folder = tmp_path_factory.mktemp("shards")
    table = pd.read_csv(data_file)
    for index in range(3):
        table.iloc[index::3].to_parquet(folder / f"part-{index}.parquet", index=False)
    return folder


def test_a_streamed_run_trains_end_to_end(tmp_path, review_shards, capsys):
    assert train.main(streamed_args(tmp_path, review_shards / "*.parquet")) == 0
    out = capsys.readouterr().out
    assert "Streaming the data (" in out and "dataset.streaming: true)" in out
    assert (
        "3 parquet shards; validation and test carved by text hash; 193 training rows "
        "(counted); vocabulary from all of them" in out
    )
    metrics = metrics_of(tmp_path / "tiny")
    assert metrics["epochs"] == 2 and metrics["class_names"] == ["negative", "positive"]
    # evaluate.py's split, read in memory, is the one training scored: the same metrics.
    run = saved_run.load_run(tmp_path / "tiny")
    texts, labels = run.load_split("validation")
    assert len(labels) == 24
    probabilities = np.asarray(run.model(texts.astype(str), training=False))
    assert (probabilities.argmax(-1) == labels).mean() == metrics["validation"]["accuracy"]


def test_an_unreadable_shard_stops_before_training(tmp_path, review_shards, capsys):
    shards = tmp_path / "shards"
    shards.mkdir()
    for path in review_shards.iterdir():
        (shards / path.name).write_bytes(path.read_bytes())
    (shards / "part-2.parquet").write_bytes(b"PAR1 cut short")
    assert train.main(streamed_args(tmp_path, shards)) == 2
    error = capsys.readouterr().err
    assert error.startswith(
        f"train.py: error: {shards / 'part-2.parquet'} could not be read as parquet ("
    )
    assert error.count("\n") == 1 and "Traceback" not in error
    assert not (tmp_path / "tiny.partial").exists()


def write_reviews(path, count, bad_row=None):
    rng = random.Random(count)
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        for index in range(count):
            label = "positive" if index % 2 else "negative"
            word = rng.choice(("good", "great", "fine") if index % 2 else ("bad", "dull", "weak"))
            writer.writerow(
                [f"{word} film {rng.randint(0, 99)}", "neutral" if index == bad_row else label]
            )
    return path


def test_a_bad_row_mid_stream_is_named_and_the_finished_epochs_resume(
    tmp_path, monkeypatch, capsys
):
    # Small record batches, a small shuffle buffer and given labels (no pass before
    # training reads the labels): row 1201 is first read in epoch 7 or so.
    monkeypatch.setattr("data.reading.record_batches.BLOCK_BYTES", 2048)
    train_file = write_reviews(tmp_path / "train.csv", 1600, bad_row=1200)
    args = streamed_args(
        tmp_path,
        train_file,
        "dataset.labels=[negative, positive]",
        f"dataset.validation_file={write_reviews(tmp_path / 'validation.csv', 40)}",
        f"dataset.test_file={write_reviews(tmp_path / 'test.csv', 40)}",
        "dataset.shuffle_buffer=16",
        "training.epochs=14",
        "training.early_stopping_patience=0",
    )
    assert train.main(args) == 2
    error = capsys.readouterr().err
    partial = tmp_path / "tiny.partial"
    assert error == (
        f"train.py: error: {train_file} row 1201 (line 1202) column 'label': label "
        "'neutral' is not in dataset.labels (negative, positive); fix the label or "
        f"add it to dataset.labels (finished epochs kept in {partial}: fix the data "
        "and the same command resumes)\n"
    )
    finished = len(runs.read_history(partial))
    assert 2 <= finished < 14

    # The resume of a streamed run: from its last finished epoch, the stream afresh (this
    # also covers a streamed run stopped by Ctrl-C: both keep the same partial folder).
    write_reviews(train_file, 1600)
    assert train.main(args) == 0
    out = capsys.readouterr().out
    assert "Resuming the interrupted run" in out and "the stream starts over" in out
    assert [int(row["epoch"]) for row in runs.read_history(tmp_path / "tiny")] == list(range(1, 15))
