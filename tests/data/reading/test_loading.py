import pytest
import tensorflow_datasets as tfds

from config import DatasetConfig
from data import DataError, load_text_splits


def test_catalog_dataset_with_carved_validation(tmp_path):
    with tfds.testing.mock_data(num_examples=20):
        splits = load_text_splits(DatasetConfig(tfds_name="imdb_reviews", data_dir=str(tmp_path)))
    assert splits.class_names == ["neg", "pos"]
    # Mocked train and test both have 20 examples; validation is 10% of train.
    assert splits.sizes() == {"train": 18, "validation": 2, "test": 20}
    assert isinstance(splits.train[0][0], str)
    assert splits.train[1].dtype == "int64"


def test_catalog_dataset_with_other_keys_and_split_names(tmp_path):
    dataset = DatasetConfig(
        tfds_name="ag_news_subset",
        data_dir=str(tmp_path),
        text_column="title",
        train_split="train[:50%]",
        validation_split="train[50%:]",
        test_split=None,
    )
    with tfds.testing.mock_data(num_examples=30):
        splits = load_text_splits(dataset)
    assert splits.class_names == ["World", "Sports", "Business", "Sci/Tech"]
    # mock_data ignores slicing: every split has 30 examples; test is 10% of train.
    assert splits.sizes() == {"train": 27, "validation": 30, "test": 3}


def test_unknown_dataset_name():
    with pytest.raises(DataError, match="unknown dataset 'reuters_r9'; use a built-in"):
        load_text_splits(DatasetConfig(tfds_name="reuters_r9"))


def test_unknown_feature_key(tmp_path):
    with pytest.raises(DataError, match="no feature .review. .* set dataset.text_column"):
        load_text_splits(
            DatasetConfig(tfds_name="imdb_reviews", data_dir=str(tmp_path), text_column="review")
        )


def test_catalog_dataset_that_cannot_be_downloaded(tmp_path, monkeypatch):
    builder_class = type(tfds.builder("imdb_reviews", data_dir=str(tmp_path)))

    def offline(self, *args, **kwargs):
        raise ConnectionError("Failed to resolve host")

    monkeypatch.setattr(builder_class, "download_and_prepare", offline)
    with pytest.raises(DataError) as raised:
        load_text_splits(DatasetConfig(tfds_name="imdb_reviews", data_dir=str(tmp_path)))
    message = str(raised.value)
    assert "imdb_reviews' is not prepared in" in message and "ConnectionError" in message
    assert "\n" not in message


def test_builtin_dataset_uses_its_own_validation_split(builtin_splits):
    assert builtin_splits("bbc_news").sizes() == {"train": 1701, "validation": 213, "test": 213}


def test_unknown_split_of_a_builtin_dataset(builtin_data_dir):
    dataset = DatasetConfig(name="bbc_news", data_dir=builtin_data_dir, test_split="dev")
    with pytest.raises(DataError, match="has no split 'dev' \\(splits: train, validation, test\\)"):
        load_text_splits(dataset)


def test_split_slices_of_a_builtin_dataset(builtin_data_dir):
    dataset = DatasetConfig(
        name="bbc_news", data_dir=builtin_data_dir, train_split="train[:50%]", test_split=None
    )
    splits = load_text_splits(dataset)
    # Half of train (850), a stratified 10% of it carved off as test; validation as built.
    assert splits.sizes() == {"train": 765, "validation": 213, "test": 85}
