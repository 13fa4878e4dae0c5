import pathlib

import pytest

from data import DataError
from data.reading.record_batches import check_columns, read_batches
from tests.data.shards import review_rows, write_rows


def rows_of(path, columns=("text", "label")):
    return [
        (row, [array.to_pylist() for array in arrays])
        for row, arrays in read_batches(path, list(columns))
    ]


def test_small_blocks_keep_quoted_fields_and_count_rows(tmp_path, monkeypatch):
    monkeypatch.setattr("data.reading.record_batches.BLOCK_BYTES", 64)
    path = tmp_path / "train.csv"
    lines = "".join(
        f'"review {index}, with a comma\nand a newline",{index % 2}\n' for index in range(12)
    )
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
    monkeypatch.setattr("data.reading.record_batches.BLOCK_BYTES", 128)
    rows = review_rows(40)
    rows[33]["text"] = "   "
    path = write_rows(tmp_path / "train.csv", rows)
    with pytest.raises(
        DataError,
        match=r"^.*train\.csv row 34 \(line 35\) column 'text' is "
        r"empty; fill it or remove the row$",
    ):
        rows_of(path)


def test_unreadable_shards_are_named(tmp_path):
    junk = tmp_path / "part-1.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(
        DataError,
        match=r"part-1\.parquet could not be read as parquet "
        r"\(ArrowInvalid: Parquet magic bytes",
    ):
        check_columns(junk, {"text_column": "text"})
    latin = tmp_path / "latin.csv"
    latin.write_bytes("text,label\ncaf\xe9,1\n".encode("latin-1"))
    with pytest.raises(
        DataError,
        match=r"latin\.csv row 1 \(line 2\) column 'text' is not "
        "valid UTF-8; save the file as UTF-8$",
    ):
        rows_of(latin)


def test_a_missing_column_lists_the_columns(tmp_path):
    path = write_rows(tmp_path / "train.jsonl", [{"review": "good", "label": 1}])
    with pytest.raises(
        DataError,
        match=r"has no column 'text' \(columns: review, label\); set "
        "dataset.text_column",
    ):
        check_columns(pathlib.Path(path), {"text_column": "text", "label_column": "label"})


def test_a_malformed_row_is_named_even_blocks_after_the_start(tmp_path, monkeypatch):
    monkeypatch.setattr("data.reading.record_batches.BLOCK_BYTES", 128)
    rows = "".join(f"review {index},{index % 2}\n" for index in range(150))
    csv_path = tmp_path / "train.csv"
    csv_path.write_text(f"text,label\n{rows}one field too many,1,x\n")
    with pytest.raises(
        DataError,
        match=r"train\.csv row 151 \(line 152\) could not be read as "
        r"csv \(ArrowInvalid: CSV parse error: Expected 2 "
        r"columns, got 3: one field too many,1,x\); fix the file",
    ):
        rows_of(csv_path)
    rows = "".join(f'{{"text": "review {index}", "label": {index % 2}}}\n' for index in range(150))
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_text(rows + '{"text": "a word label", "label": "pos"}\n')
    with pytest.raises(
        DataError,
        match=r"train\.jsonl row 151 \(line 151\) column 'label' holds "
        "a string where the rows above hold numbers",
    ):
        rows_of(jsonl)
    jsonl.write_text(rows + '{"text": "no comma" "label": 1}\n')
    with pytest.raises(
        DataError,
        match=r"train\.jsonl row 151 \(line 151\) could not be read as "
        r"jsonl \(ArrowInvalid: JSON parse error: Missing a comma",
    ):
        rows_of(jsonl)


def test_json_values_come_as_written_and_other_keys_are_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr("data.reading.record_batches.BLOCK_BYTES", 128)
    jsonl = tmp_path / "train.jsonl"
    # Dates stay text (pyarrow would read timestamps); past the first block, where the
    # columns are found, "extra" is not parsed, so its types may change.
    jsonl.write_text(
        '{"text": "2020-01-01", "label": 3, "extra": 1}\n'
        '{"text": "1999-12-31", "label": 10, "extra": 2}\n'
        + '{"text": "a review", "label": 3, "extra": "one"}\n'
        * 4
    )
    texts, labels = (sum(values, []) for values in zip(*(arrays for _, arrays in rows_of(jsonl))))
    assert texts[:3] == ["2020-01-01", "1999-12-31", "a review"] and len(texts) == 6
    assert labels[:3] == ["3", "10", "3"]


def test_a_parquet_nan_is_empty_and_bytes_must_be_utf8(tmp_path):
    path = write_rows(
        tmp_path / "train.parquet",
        [{"text": "good", "label": 1.0}, {"text": "bad", "label": float("nan")}],
    )
    with pytest.raises(DataError, match=r"train\.parquet row 2 column 'label' is empty"):
        rows_of(path)
    path = write_rows(
        tmp_path / "bytes.parquet",
        [{"text": b"good", "label": "pos"}, {"text": b"caf\xe9", "label": "neg"}],
    )
    with pytest.raises(DataError, match=r"bytes\.parquet row 2 column 'text' is not valid UTF-8"):
        rows_of(path)
