import pathlib

import pytest

from data import DataError
from data.record_batches import check_columns, read_batches
from tests.data.shards import review_rows, write_rows


def rows_of(path, columns=("text", "label")):
    return [(row, [array.to_pylist() for array in arrays])
            for row, arrays in read_batches(path, list(columns))]


def test_small_blocks_keep_quoted_fields_and_count_rows(tmp_path, monkeypatch):
    monkeypatch.setattr("data.record_batches.BLOCK_BYTES", 64)
    path = tmp_path / "train.csv"
    lines = "".join(f'"review {index}, with a comma\nand a newline",{index % 2}\n'
                    for index in range(12))
    path.write_text("text,label\nNA,1\n" + lines)
    batches = rows_of(path)
    assert len(batches) > 3  # The 64-byte blocks read it in pieces...
    starts = [row for row, _ in batches]
    texts = [text for _, (chunk, _) in batches for text in chunk]
    # ...whose first rows add up, with "NA" a text like any other.
    assert starts == sorted(starts) and starts[0] == 0 and len(texts) == 13
    assert texts[:2] == ["NA", "review 0, with a comma\nand a newline"]


@pytest.mark.parametrize("suffix", [".tsv", ".jsonl", ".parquet"])
def test_every_format_gives_strings(tmp_path, suffix):
    rows = [{"text": "good", "label": 1}, {"text": "bad", "label": 0}]
    [(row, (texts, labels))] = rows_of(write_rows(tmp_path / f"train{suffix}", rows))
    assert (row, texts, labels) == (0, ["good", "bad"], ["1", "0"])


def test_an_empty_text_is_named_by_row_and_line(tmp_path, monkeypatch):
    monkeypatch.setattr("data.record_batches.BLOCK_BYTES", 128)
    rows = review_rows(40)
    rows[33]["text"] = "   "
    path = write_rows(tmp_path / "train.csv", rows)
    with pytest.raises(DataError, match=r"^.*train\.csv row 34 \(line 35\) column 'text' is "
                                        r"empty; fill it or remove the row$"):
        rows_of(path)


def test_unreadable_shards_are_named(tmp_path):
    junk = tmp_path / "part-1.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match=r"part-1\.parquet could not be read as parquet "
                                        r"\(ArrowInvalid: Parquet magic bytes"):
        check_columns(junk, {"text_column": "text"})
    latin = tmp_path / "latin.csv"
    latin.write_bytes("text,label\ncaf\xe9,1\n".encode("latin-1"))
    with pytest.raises(DataError, match="latin.csv: not valid UTF-8; save the file as UTF-8"):
        rows_of(latin)


def test_a_missing_column_lists_the_columns(tmp_path):
    path = write_rows(tmp_path / "train.jsonl", [{"review": "good", "label": 1}])
    with pytest.raises(DataError, match=r"has no column 'text' \(columns: review, label\); set "
                                        "dataset.text_column"):
        check_columns(pathlib.Path(path), {"text_column": "text", "label_column": "label"})
