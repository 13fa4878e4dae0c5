"""tf.data pipelines of token ids and labels for the three splits."""

import keras
import tensorflow as tf

from data.text_splits import TextSplits

SPLITS = ("train", "validation", "test")
# Strings are vectorised in chunks: one TextVectorization call per text would be slow.
VECTORIZE_CHUNK = 1024


def make_pipelines(
    splits: TextSplits, vectorizer: keras.layers.TextVectorization, batch_size: int, seed: int
) -> dict[str, tf.data.Dataset]:
    """Batched `(token_ids int64 (B, T), label int64 (B,))` datasets for each split.

    Texts are vectorised inside tf.data (never inside the trained model: string tensors
    fail under `tf.distribute.MirroredStrategy`), once, then cached. Train is shuffled over
    the whole split with `seed`, in a new order each epoch, the same orders for the same seed.

    Example:
    >>> # pipelines = make_pipelines(splits, vectorizer, batch_size=32, seed=0)
    >>> # token_ids, labels = next(iter(pipelines["train"]))
    """
    pipelines = {}
    for split in SPLITS:
        texts, labels = getattr(splits, split)
        dataset = (
            tf.data.Dataset.from_tensor_slices((texts, labels))
            .batch(VECTORIZE_CHUNK)
            .map(lambda text, label: (vectorizer(text), label), num_parallel_calls=tf.data.AUTOTUNE)
            .unbatch()
            # unbatch() forgets the size; Keras needs it for progress and steps per epoch.
            .apply(tf.data.experimental.assert_cardinality(len(labels)))
            .cache()
        )
        if split == "train":
            dataset = dataset.shuffle(len(labels), seed=seed, reshuffle_each_iteration=True)
        pipelines[split] = dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)
    return pipelines
