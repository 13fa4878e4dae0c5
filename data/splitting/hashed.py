"""Held-out splits and the vocabulary sample chosen by a keyed hash of each text.

A text's split depends on the text and `dataset.split_seed` alone, never on its position,
its shard or the other rows: the same text lands in the same split on every run, on every
worker and in any shard order, identical texts land together, and no pass over the whole
data is needed. Class shares hold on average only (a label of 30 rows may get 1 or 6 of a
10% split). The hash is TensorFlow's keyed SipHash (`tf.strings.to_hash_bucket_strong`),
whose value is fixed for a key, so the in-memory and the streaming paths agree.
"""

import numpy as np
import tensorflow as tf

# A split or sample is a range of this many hash buckets: fractions to 1e-6.
HASH_BUCKETS = 1_000_000
# Second words of the SipHash keys: the splits and the sample must not pick the same texts.
SPLIT_KEY, SAMPLE_KEY = 0, 1
# Rows are hashed this many at a time in memory (one tensor of them all would double the
# texts' memory).
CHUNK = 65536


def hash_buckets(texts, seed: int, key: int):
    """Each text's bucket in [0, HASH_BUCKETS): a tf int64 tensor (texts: a string tensor)."""
    return tf.strings.to_hash_bucket_strong(texts, HASH_BUCKETS, key=[seed % 2**63, key])


def split_edges(
    carved: tuple[str, ...], validation_fraction: float, test_fraction: float
) -> list[int]:
    """Upper bucket edges of the carved splits, in `carved`'s order (after them: train).

    Example:
    >>> split_edges(("validation", "test"), 0.1, 0.1)
    [100000, 200000]
    """
    fractions = {"validation": validation_fraction, "test": test_fraction}
    return [
        int(round(edge * HASH_BUCKETS))
        for edge in np.cumsum([fractions[split] for split in carved])
    ]


def split_parts(texts, edges: list[int], seed: int):
    """Each text's part: 0 train, i for the i-th carved split (a tf int64 tensor)."""
    buckets = hash_buckets(texts, seed, SPLIT_KEY)
    # A text is in the first carved split whose edge is above its bucket, else train.
    parts = tf.searchsorted(tf.constant(edges, tf.int64), buckets, side="right") + 1
    return tf.where(parts > len(edges), tf.zeros_like(parts), parts)


def part_indices(texts: np.ndarray, edges: list[int], seed: int) -> list[np.ndarray]:
    """[train, carved_1, ...] row indices of an in-memory array of texts.

    Example:
    >>> texts = np.array([f"review {index}" for index in range(1000)], dtype=object)
    >>> rest, held = part_indices(texts, split_edges(("test",), 0.1, 0.1), seed=0)
    >>> len(rest) + len(held), 60 < len(held) < 140
    (1000, True)
    """
    parts = np.concatenate(
        [
            np.zeros(0, np.int64),
            *(
                split_parts(tf.constant(texts[start : start + CHUNK]), edges, seed).numpy()
                for start in range(0, len(texts), CHUNK)
            ),
        ]
    )
    return [np.flatnonzero(parts == part) for part in range(len(edges) + 1)]


def sample_rate(sample_size: int, rows: int) -> float:
    """The share of `rows` training texts a sample of about `sample_size` keeps (1: all)."""
    return 1.0 if rows <= sample_size else sample_size / rows


def in_sample(texts, rate: float, seed: int):
    """Whether each text is in the vocabulary sample (a tf bool tensor); rate 1 keeps all."""
    if rate >= 1.0:
        return tf.ones_like(texts, dtype=tf.bool)
    return hash_buckets(texts, seed, SAMPLE_KEY) < int(round(rate * HASH_BUCKETS))


def carve_by_hash(
    splits: dict, validation_fraction: float, test_fraction: float, seed: int
) -> dict:
    """Fills in a missing "validation" and/or "test" from "train" (in memory) by hash; a
    split is (texts, labels) or (texts, labels, *more per-row arrays), cut alike.

    Example:
    >>> texts = np.array([f"text {index}" for index in range(100)], dtype=object)
    >>> splits = carve_by_hash({"train": (texts, np.arange(100) % 2)}, 0.2, 0.2, seed=0)
    >>> sum(len(labels) for _, labels in splits.values())
    100
    """
    carved = tuple(split for split in ("validation", "test") if split not in splits)
    if not carved:
        return dict(splits)
    texts = splits["train"][0]
    parts = part_indices(texts, split_edges(carved, validation_fraction, test_fraction), seed)
    result = dict(splits)
    for split, indices in zip(("train", *carved), parts, strict=True):
        result[split] = tuple(values[indices] for values in splits["train"])
    return {split: result[split] for split in ("train", "validation", "test")}
