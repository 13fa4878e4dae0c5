"""tf.data pipelines of token ids and labels for the three splits, padded per batch only.

Every batch is padded to its own longest text, never to `text.sequence_length` (that is
only the cap): on short texts the cap is mostly padding, and attention costs grow with the
square of the padded length. Batches come out of length buckets, so texts of similar
lengths travel together and little padding is left at all.
"""

import math

import keras
import numpy as np
import tensorflow as tf

from data.pipelines.lower_states import LowerStates, with_lower_states
from data.splitting.text_splits import TextSplits

SPLITS = ("train", "validation", "test")
# Strings are vectorised in chunks: one TextVectorization call per text would be slow.
VECTORIZE_CHUNK = 1024
# Upper edges of the training length buckets (a text of length T goes to the first edge
# above T); doubling keeps the padding in a bucket under half of its batch.
BUCKET_EDGES = (8, 16, 32, 64, 128, 256, 512, 1024)
# Validation and test batches come out of buckets this many tokens wide, in a fixed order:
# their order does not matter, and narrow buckets pad least. 20 Newsgroups' validation
# batches are 94% real tokens this way against 42% in the split's order (scoring both
# splits: 3.5 s instead of 6.2). Training keeps wider buckets: more texts to mix in each.
EVALUATION_BUCKET_WIDTH = 16


def make_pipelines(
    splits: TextSplits,
    vectorizer: keras.layers.TextVectorization,
    batch_size: int,
    seed: int,
    pad_to_cap: bool = False,
    evaluation_buckets: bool = True,
    lower_states: LowerStates | None = None,
    positions: bool = False,
) -> dict[str, tf.data.Dataset]:
    """Batched `(token_ids int64 (B, T), label int64 (B,))` datasets for each split; with
    `lower_states`, train and validation batches are `((token_ids, states (B, A, D)),
    label)`, the frozen lower blocks' states computed once (`data.pipelines.lower_states`).
    With `positions`, train batches carry a third element: each text's position in the
    split, int64 (B,) (what `engine.training.dynamics.TrainingDynamics` records by); the
    order is the same.

    T is the longest text of the batch (at most the vectoriser's sequence length). Texts
    are vectorised inside tf.data (never inside the trained model: string tensors fail
    under `tf.distribute.MirroredStrategy`), once, then cached. Train is shuffled over the
    whole split with `seed`, in a new order each epoch (the same orders for the same seed),
    then batched by length bucket. Validation and test are batched by narrower length
    buckets, in the same order every time (not the split's: their labels travel with
    their texts); `evaluation_buckets=False` keeps them in the split's order. `pad_to_cap`
    keeps every text padded to the cap instead, unbucketed: a model that does not mask
    padding (`mask_zero: false`) would otherwise see a different input in each batch.

    Example:
    >>> # pipelines = make_pipelines(splits, vectorizer, batch_size=32, seed=0)
    >>> # token_ids, labels = next(iter(pipelines["train"]))
    """
    pipelines = {}
    for split in SPLITS:
        texts, labels = getattr(splits, split)
        columns = (texts, labels)
        if positions and split == "train":
            columns += (np.arange(len(labels), dtype=np.int64),)
        dataset = (
            tf.data.Dataset.from_tensor_slices(columns)
            .batch(VECTORIZE_CHUNK)
            .map(lambda text, *rest: (vectorizer(text), *rest), num_parallel_calls=tf.data.AUTOTUNE)
            .unbatch()
        )
        dataset = (dataset if pad_to_cap else dataset.map(drop_padding)).cache()
        texts_only = dataset
        if lower_states is not None and split != "test":  # The test split is scored once.
            dataset = with_lower_states(dataset, lower_states, split)
        if pad_to_cap or (split != "train" and not evaluation_buckets):
            dataset = _shuffled(dataset, split, len(labels), seed).padded_batch(batch_size)
            num_batches = math.ceil(len(labels) / batch_size)
        else:
            # Counted before the shuffle, whose every iterator draws the next seeded order.
            lengths = _text_lengths(texts_only)
            longest = lengths.max(initial=1)
            if split == "train":
                edges = [edge for edge in BUCKET_EDGES if edge < longest]
            else:
                edges = list(range(EVALUATION_BUCKET_WIDTH, longest, EVALUATION_BUCKET_WIDTH))
            dataset = _shuffled(dataset, split, len(labels), seed).bucket_by_sequence_length(
                lambda inputs, *rest: tf.shape(inputs[0] if isinstance(inputs, tuple) else inputs)[
                    0
                ],
                bucket_boundaries=[edge + 1 for edge in edges],
                bucket_batch_sizes=[batch_size] * (len(edges) + 1),
            )
            num_batches = bucketed_batch_count(lengths, edges, batch_size)
        # Keras needs the number of batches for steps and progress; bucketing hides it.
        pipelines[split] = dataset.apply(
            tf.data.experimental.assert_cardinality(num_batches)
        ).prefetch(tf.data.AUTOTUNE)
    return pipelines


def one_hot_labels(pipelines, num_classes):
    """`pipelines` with one-hot labels: the trainer's loss takes categorical targets."""

    def one_hot(token_ids, label, *positions):
        return token_ids, tf.one_hot(label, num_classes), *positions

    # A mapped dataset keeps its known number of batches (Keras needs it for steps).
    return {split: dataset.map(one_hot) for split, dataset in pipelines.items()}


def _text_lengths(dataset):
    """The token count of each text of an unbatched dataset of `(token_ids, ...)`, int32;
    counted in chunks (one text at a time, Python's overhead took seconds per split)."""
    return np.concatenate(
        [
            np.zeros(0, np.int32),
            *(
                dataset.map(lambda token_ids, *rest: tf.shape(token_ids)[0])
                .batch(VECTORIZE_CHUNK)
                .as_numpy_iterator()
            ),
        ]
    )


def _shuffled(dataset, split, size, seed):
    """The train split reshuffled over all of it each epoch, seeded; the others as they are."""
    if split != "train":
        return dataset
    return dataset.shuffle(size, seed=seed, reshuffle_each_iteration=True)


def drop_padding(token_ids, *rest):
    """One text's ids without their trailing padding (id 0); at least one id is kept."""
    length = tf.maximum(tf.reduce_sum(tf.cast(token_ids != 0, tf.int32)), 1)
    return token_ids[:length], *rest


def bucketed_batch_count(lengths, edges, batch_size):
    """Batches `bucket_by_sequence_length` makes: each bucket ends with a partial batch.

    Example:
    >>> bucketed_batch_count(np.array([3, 3, 3, 9, 20]), edges=[8, 16], batch_size=2)
    4
    >>> bucketed_batch_count(np.array([8, 8, 9]), edges=[8], batch_size=2)  # 8 <= edge 8
    2
    """
    buckets = np.searchsorted(np.asarray(edges), lengths, side="left")  # Length <= edge.
    counts = np.bincount(buckets, minlength=len(edges) + 1)
    return int(sum(math.ceil(count / batch_size) for count in counts))
