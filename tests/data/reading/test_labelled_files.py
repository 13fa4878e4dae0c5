import numpy as np
import pytest

from config import DatasetConfig
from data import (
    DataError,
    build_datasets,
    load_columns,
    load_file_split,
    load_text_splits,
)
from tests.data.shards import write_rows, write_shards

ROWS = [
    {"text": f"review number {index}", "label": "pos" if index % 4 else "neg"}
    for index in range(40)
]


def write(path, rows=ROWS):
    return write_rows(path, rows)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_reads_every_format(tmp_path, suffix):
    texts, labels = load_file_split(write(tmp_path / f"train{suffix}"))
    assert texts.tolist() == [row["text"] for row in ROWS]
    assert labels.tolist() == [row["label"] for row in ROWS]


def test_configurable_columns_and_literal_na_text(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text('review,stars,extra\nNA,5,x\n"a, quoted\ntext",1,y\n')
    texts, labels = load_file_split(path, text_column="review", label_column="stars")
    assert texts.tolist() == ["NA", "a, quoted\ntext"]
    assert labels.tolist() == ["5", "1"]


def test_splits_carved_from_train_are_stratified_and_seeded(tmp_path):
    dataset = DatasetConfig(train_file=str(write(tmp_path / "train.csv")), split_seed=1)
    splits = load_text_splits(dataset)
    assert splits.sizes() == {"train": 32, "validation": 4, "test": 4}
    assert splits.class_names == ["neg", "pos"]
    assert splits.validation[1].tolist().count(0) == 1  # 10 neg of 40: a quarter everywhere
    all_texts = np.concatenate([splits.train[0], splits.validation[0], splits.test[0]])
    assert len(set(all_texts)) == 40
    again = load_text_splits(dataset)
    assert again.test[0].tolist() == splits.test[0].tolist()


def test_separate_files_are_used_as_given(tmp_path):
    dataset = DatasetConfig(
        train_file=str(write(tmp_path / "train.parquet")),
        validation_file=str(write(tmp_path / "validation.jsonl", ROWS[:3])),
        test_file=str(write(tmp_path / "test.tsv", ROWS[:5])),
    )
    splits = load_text_splits(dataset)
    assert splits.sizes() == {"train": 40, "validation": 3, "test": 5}
    assert splits.test[1].tolist() == [0, 1, 1, 1, 0]


def test_integer_labels_keep_numeric_order(tmp_path):
    rows = [{"text": f"t{index}", "label": index % 11} for index in range(33)]
    splits = load_text_splits(DatasetConfig(train_file=str(write(tmp_path / "train.jsonl", rows))))
    assert splits.class_names == [str(index) for index in range(11)]


def test_missing_column_names_file_and_columns(tmp_path):
    path = write(tmp_path / "train.csv")
    with pytest.raises(
        DataError, match=r"train.csv has no column 'review' \(columns: text, label\)"
    ):
        load_file_split(path, text_column="review")


def test_empty_text_names_file_row_and_column(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("text,label\ngood,pos\n  ,neg\n")
    with pytest.raises(DataError, match=r"train.csv row 2 \(line 3\) column 'text' is empty"):
        load_file_split(path)


def test_empty_label_in_jsonl(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text('{"text": "good", "label": "pos"}\n{"text": "bad", "label": null}\n')
    with pytest.raises(DataError, match=r"train.jsonl row 2 \(line 2\) column 'label' is empty"):
        load_file_split(path)


def test_unknown_label_in_test_file(tmp_path):
    dataset = DatasetConfig(
        train_file=str(write(tmp_path / "train.csv")),
        test_file=str(write(tmp_path / "test.csv", ROWS[:2] + [{"text": "meh", "label": "mixed"}])),
    )
    with pytest.raises(DataError, match=r"test.csv row 3 \(line 4\) column 'label': label 'mixed'"):
        load_text_splits(dataset)


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "train.csv"
    path.write_bytes("text,label\ngood,pos\ncaf\u00e9,neg\n".encode("latin-1"))
    with pytest.raises(
        DataError, match=r"train.csv row 2 \(line 3\) column 'text' is not valid UTF-8; save"
    ):
        load_file_split(path)
    # Bytes that no cell holds (here in the header) still name the line.
    path.write_bytes(b"text,lab\xe9l\ngood,pos\n")
    with pytest.raises(DataError, match="train.csv line 1 is not valid UTF-8"):
        load_file_split(path)
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_bytes(b'{"text": "ok", "label": "a"}\n{"text": "ok", "label": "\xff"}\n')
    with pytest.raises(DataError, match=r"train.jsonl row 2 \(line 2\) column 'label'"):
        load_file_split(jsonl)


def test_unsupported_missing_and_unreadable_files(tmp_path):
    with pytest.raises(DataError, match="unsupported file type '.xlsx'"):
        load_file_split(tmp_path / "train.xlsx")
    with pytest.raises(DataError, match="does not exist"):
        load_file_split(tmp_path / "train.csv")
    (tmp_path / "train.parquet").write_bytes(b"not parquet")
    with pytest.raises(DataError, match="could not be read as parquet"):
        load_file_split(tmp_path / "train.parquet")
    (tmp_path / "train.jsonl").write_text('{"text": "good",\n')
    with pytest.raises(DataError, match="could not be read as jsonl"):
        load_file_split(tmp_path / "train.jsonl")


def test_one_class_is_refused_naming_the_file_and_the_label(tmp_path):
    path = write(tmp_path / "train.csv", [{"text": f"t {i}", "label": "pos"} for i in range(30)])
    with pytest.raises(
        DataError,
        match=r"train.csv: every training example has the label "
        r"'pos'; a classifier needs examples of at least two",
    ):
        load_text_splits(DatasetConfig(train_file=str(path)))


@pytest.mark.parametrize(
    "rows",
    [
        [{"text": "good", "label": "pos"}, {"text": "bad", "label": "neg"}],  # too few to carve
        [{"text": "same", "label": "pos"}] * 20 + [{"text": "other", "label": "neg"}] * 20,
    ],
)
def test_a_split_left_empty_by_carving_says_how_to_fix_it(tmp_path, rows):
    path = write(tmp_path / "train.csv", rows)
    with pytest.raises(DataError) as error:
        load_text_splits(DatasetConfig(train_file=str(path)))
    message = str(error.value)
    assert message.startswith(f"{path}: the validation split is empty")
    assert "dataset.validation_file" in message and "\n" not in message


def test_an_empty_given_test_file_is_refused(tmp_path):
    train = write(tmp_path / "train.csv")
    test = tmp_path / "test.csv"
    test.write_text("text,label\n")
    with pytest.raises(DataError, match="the test split is empty: it has no rows"):
        load_text_splits(DatasetConfig(train_file=str(train), test_file=str(test)))


def test_labels_of_mixed_types_are_refused(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text('{"text": "a", "label": 1}\n{"text": "b", "label": "1"}\n')
    with pytest.raises(
        DataError,
        match=r"train.jsonl row 2 \(line 2\) column 'label' holds a "
        "string where the rows above hold numbers; write every "
        "value of a column the same way",
    ):
        load_file_split(path)


BAD_FILES = {  # name: (content, the one message both paths give)
    "ragged.csv": (
        b"text,label\ngood,pos\nbad,neg,extra\n",
        r"ragged\.csv row 2 \(line 3\) could not be read as csv \(ArrowInvalid: CSV "
        r"parse error: Expected 2 columns, got 3: bad,neg,extra\); fix the file format",
    ),
    "latin.tsv": (
        "text\tlabel\ngood\tpos\ncaf\xe9\tneg\n".encode("latin-1"),
        r"latin\.tsv row 2 \(line 3\) column 'text' is not valid UTF-8; save the file",
    ),
    "mixed.jsonl": (
        b'{"text": "a", "label": 1}\n{"text": "b", "label": "1"}\n',
        r"mixed\.jsonl row 2 \(line 2\) column 'label' holds a string where the rows",
    ),
    "empty.csv": (
        b"text,label\ngood,pos\n  ,neg\n",
        r"empty\.csv row 2 \(line 3\) column 'text' is empty; fill it or remove the row",
    ),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_in_memory_and_streamed_raise_the_same_error(tmp_path, name):
    content, message = BAD_FILES[name]
    path = tmp_path / name
    path.write_bytes(content)
    errors = []
    for streaming in (False, True):
        with pytest.raises(DataError, match=message) as raised:
            build_datasets(
                {"train_file": str(path), "streaming": streaming},
                {"vocabulary_size": 50},
                16,
                seed=0,
            )
        errors.append(str(raised.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("method", ["stratified", "hash"])
def test_other_columns_follow_their_rows_into_the_carved_splits(tmp_path, method):
    """`dataset.slice_columns`: a row's genre is its text's, in every split, shards joined."""
    rows = [{**row, "genre": f"genre of {row['text']}"} for row in ROWS]
    write_shards(tmp_path / "train", rows, 3)
    dataset = DatasetConfig(train_file=str(tmp_path / "train"), split_method=method)
    splits = load_text_splits(dataset)
    for split in ("train", "validation", "test"):
        texts, columns = load_columns(dataset, ["genre"], split)
        assert texts.tolist() == getattr(splits, split)[0].tolist() and len(texts) > 0
        assert columns["genre"].tolist() == [f"genre of {text}" for text in texts]


def test_other_columns_of_a_splits_own_file_and_of_a_labelled_file(tmp_path):
    rows = [{**row, "genre": "drama" if index % 3 else "comedy"} for index, row in enumerate(ROWS)]
    test = write(tmp_path / "test.csv", rows)
    dataset = DatasetConfig(train_file=str(write(tmp_path / "train.csv")), test_file=str(test))
    # The test split's own file is read; the training file, which has no genre, is not.
    texts, columns = load_columns(dataset, ["genre"], "test")
    assert texts.tolist() == load_text_splits(dataset).test[0].tolist()
    assert columns["genre"].tolist() == [row["genre"] for row in rows]
    texts, columns = load_columns(dataset, ["genre", "label"], path=test)
    assert columns["label"].tolist() == [row["label"] for row in rows]
    with pytest.raises(
        DataError,
        match=r"train.csv has no column 'genre' \(columns: text, "
        r"label\); set dataset.slice_columns",
    ):
        load_columns(dataset, ["genre"], "validation")  # carved out of train
    with pytest.raises(DataError, match="not of the TFDS dataset 'rotten_tomatoes'"):
        load_columns(DatasetConfig(name="rotten_tomatoes"), ["genre"], "test")
