import pytest

from config import DatasetConfig
from data import DataError
from data.reading.read_plan import STREAMING_AUTO_BYTES, read_plan
from data.reading.shards import shard_paths
from tests.data.shards import review_rows, write_shards


def test_a_glob_a_folder_and_a_file(tmp_path):
    paths = write_shards(tmp_path / "data", review_rows(9), 3, ".parquet")
    (tmp_path / "data" / "_SUCCESS").write_text("")
    (tmp_path / "data" / ".part-9.parquet.crc").write_text("")
    assert shard_paths(str(tmp_path / "data")) == paths
    assert shard_paths(str(tmp_path / "data" / "*.parquet")) == paths
    assert shard_paths(str(tmp_path / "**" / "part-[12].parquet")) == paths[1:]
    assert shard_paths(str(paths[0])) == paths[:1]


@pytest.mark.parametrize(
    "spec, message",
    [
        ("nothing/*.csv", "dataset.train_file: no file matches 'nothing/*.csv'"),
        ("missing.csv", "missing.csv does not exist"),
        ("notes.txt", "notes.txt: unsupported file type '.txt'"),
    ],
)
def test_what_cannot_be_read_is_named(tmp_path, monkeypatch, spec, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(DataError, match="^" + message.replace("*", "\\*").replace(".", "\\.")):
        shard_paths(spec)


def test_an_empty_folder_and_mixed_formats(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="dataset.test_file: the folder .* holds no .csv"):
        shard_paths(str(tmp_path / "empty"), "test_file")
    write_shards(tmp_path / "mixed", review_rows(4), 1, ".csv")
    write_shards(tmp_path / "mixed", review_rows(4), 1, ".jsonl")
    with pytest.raises(DataError, match=r"mixes file types \(\.csv, \.jsonl\); keep one"):
        shard_paths(str(tmp_path / "mixed"))


def test_the_plan_streams_past_the_threshold_or_when_told():
    files = DatasetConfig(train_file="x.csv")
    assert not read_plan(files, STREAMING_AUTO_BYTES).streamed
    big = read_plan(files, STREAMING_AUTO_BYTES + 1)
    assert big.streamed and big.split_method == "hash"
    assert big.describe(files) == (
        "Streaming the data (64.0 MiB on disk, over the 64 MiB of dataset.streaming: auto)"
    )
    # Told to, or told not to, whatever the size; an explicit stratified split stays in memory.
    assert read_plan(DatasetConfig(train_file="x.csv", streaming=True), 10).streamed
    assert not read_plan(DatasetConfig(train_file="x.csv", streaming=False), 10**12).streamed
    stratified = DatasetConfig(train_file="x.csv", split_method="stratified")
    plan = read_plan(stratified, 10**12)
    assert not plan.streamed and "split_method: stratified needs" in plan.describe(stratified)
    # A hash split in memory gives the streaming path's splits.
    assert (
        read_plan(DatasetConfig(train_file="x.csv", split_method="hash"), 10).split_method == "hash"
    )
