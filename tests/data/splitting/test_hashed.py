import numpy as np
import pytest
import tensorflow as tf

from data.splitting.hashed import (
    carve_by_hash,
    hash_buckets,
    in_sample,
    part_indices,
    sample_rate,
    split_edges,
    split_parts,
)

TEXTS = ["a good film", "a dull film", "review 1", "review 2", "review 3"]
EDGES = split_edges(("validation", "test"), 0.1, 0.1)


def test_buckets_are_fixed_numbers_for_a_key():
    # Pinned: a text's split must not change between runs, machines or versions.
    assert hash_buckets(tf.constant(TEXTS), 0, 0).numpy().tolist() == [
        615031,
        603205,
        918092,
        21012,
        588489,
    ]
    assert hash_buckets(tf.constant(TEXTS), 7, 0).numpy().tolist() == [
        176373,
        164516,
        271754,
        397214,
        574531,
    ]
    # "review 2" falls under 10% of the buckets: validation.
    assert split_parts(tf.constant(TEXTS), EDGES, 0).numpy().tolist() == [0, 0, 0, 1, 0]


def test_a_texts_split_ignores_its_position_and_neighbours():
    texts = np.array([f"review number {index}" for index in range(2000)], dtype=object)
    parts = split_parts(tf.constant(texts), EDGES, seed=3).numpy()
    order = np.random.default_rng(0).permutation(len(texts))
    shuffled = split_parts(tf.constant(texts[order]), EDGES, seed=3).numpy()
    np.testing.assert_array_equal(shuffled, parts[order])
    # Any shard of the rows gives its texts the same parts.
    np.testing.assert_array_equal(
        split_parts(tf.constant(texts[1::3]), EDGES, 3).numpy(), parts[1::3]
    )
    # Another seed, other splits.
    assert (split_parts(tf.constant(texts), EDGES, seed=4).numpy() != parts).mean() > 0.1


def test_fractions_come_out_roughly_right():
    texts = np.array([f"text {index}" for index in range(20000)], dtype=object)
    rest, validation, test = part_indices(texts, EDGES, seed=0)
    assert len(rest) + len(validation) + len(test) == 20000
    # 10% each, within 3 standard deviations of a binomial (0.6% of 20,000).
    assert abs(len(validation) - 2000) < 130 and abs(len(test) - 2000) < 130


def test_duplicates_stay_together_and_in_memory_agrees_with_the_graph():
    texts = np.array([f"text {index % 300}" for index in range(1200)], dtype=object)
    labels = np.arange(1200) % 3
    splits = carve_by_hash({"train": (texts, labels)}, 0.1, 0.1, seed=0)
    sets = [set(splits[split][0]) for split in ("train", "validation", "test")]
    assert not (sets[0] & sets[1] or sets[0] & sets[2] or sets[1] & sets[2])
    assert sum(len(split_labels) for _, split_labels in splits.values()) == 1200
    in_graph = (
        tf.data.Dataset.from_tensor_slices(texts)
        .batch(128)
        .map(lambda batch: split_parts(batch, EDGES, 0))
        .unbatch()
    )
    parts = np.array(list(in_graph.as_numpy_iterator()))
    assert set(texts[parts == 1]) == sets[1] and set(texts[parts == 2]) == sets[2]


def test_only_the_missing_split_is_carved():
    texts = np.array([f"text {index}" for index in range(1000)], dtype=object)
    given = (np.array(["given"], dtype=object), np.array([0]))
    splits = carve_by_hash({"train": (texts, np.zeros(1000)), "validation": given}, 0.1, 0.2, 0)
    assert splits["validation"][0].tolist() == ["given"]
    # The test split takes the first 20% of the buckets when it is the only one carved.
    assert 150 < len(splits["test"][0]) < 250


@pytest.mark.parametrize("rows, expected", [(10, 1.0), (1000, 0.1)])
def test_sample_rate(rows, expected):
    assert sample_rate(100, rows) == expected


def test_the_sample_is_a_seeded_share_of_the_texts():
    texts = tf.constant([f"text {index}" for index in range(10000)])
    assert bool(tf.reduce_all(in_sample(texts, 1.0, seed=0)))
    kept = in_sample(texts, 0.25, seed=0).numpy()
    assert 2300 < kept.sum() < 2700
    np.testing.assert_array_equal(in_sample(texts, 0.25, seed=0).numpy(), kept)
    # Not the texts the splits take: another key.
    validation = split_parts(texts, split_edges(("validation",), 0.25, 0.1), 0).numpy() == 1
    assert abs((kept & validation).sum() - 625) < 120
