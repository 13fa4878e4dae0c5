"""Unlabelled texts for predict.py and evaluate.py --texts-file: one per line, checked."""

import io

import pytest

from data import DataError, check_texts, read_texts_file


def test_one_text_per_line_blank_lines_skipped_and_numbers_kept(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("such a wonderful film\n\n  a dull plot  \n")
    assert read_texts_file(path) == [(1, "such a wonderful film"), (3, "a dull plot")]


def test_dash_reads_standard_input(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("good\nbad\n"))
    assert read_texts_file("-") == [(1, "good"), (2, "bad")]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\n  \n", "no texts in the file; write one text per line"),
        (b"caf\xe9\n", "not a UTF-8 text file; save it as UTF-8"),
    ],
)
def test_bad_files(tmp_path, content, message):
    path = tmp_path / "texts.txt"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message):
        read_texts_file(path)
    with pytest.raises(DataError, match="--texts-file .*missing.txt: cannot read the texts file"):
        read_texts_file(tmp_path / "missing.txt")


@pytest.mark.parametrize(
    "texts, message",
    [
        (["good", "  "], "text 2 is empty"),
        ([], "no texts given"),
    ],
)
def test_check_texts(texts, message):
    with pytest.raises(DataError, match=message):
        check_texts(texts)
