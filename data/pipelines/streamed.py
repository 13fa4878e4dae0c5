"""tf.data pipelines of token ids for streamed splits: bounded memory, nothing cached.

The in-memory pipelines (`in_memory.py`) cache a split's token ids and shuffle all of it.
A stream is never held: the training texts are shuffled in a buffer of
`dataset.shuffle_buffer` texts after a seeded round-robin read of the shards (a new file
order each pass), the training stream never ends (an epoch is a number of steps), and
validation and test are read again each time they are scored. Batches are made as in
memory: padded to their longest text and bucketed by length.
"""

import tensorflow as tf

from data.pipelines.in_memory import BUCKET_EDGES, EVALUATION_BUCKET_WIDTH, VECTORIZE_CHUNK
from data.splitting.hashed import split_parts


def split_batches(
    batches: tf.data.Dataset, part: int | None, edges: list[int], split_seed: int
) -> tf.data.Dataset:
    """(texts, label ids) batches of a split out of a source's batches: all of them, or
    with `part`, the rows whose text hashes into that part (`data.splitting.hashed.split_parts`)."""
    if part is None:
        return batches

    def keep(texts, labels):
        mask = tf.equal(split_parts(texts, edges, split_seed), part)
        return tf.boolean_mask(texts, mask), tf.boolean_mask(labels, mask)

    return batches.map(keep, num_parallel_calls=tf.data.AUTOTUNE)


def stream_pipeline(
    batches: tf.data.Dataset,
    vectorizer,
    sequence_length: int,
    batch_size: int,
    shuffle_buffer: int | None = None,
    seed: int = 0,
    pad_to_cap: bool = False,
) -> tf.data.Dataset:
    """Batched `(token_ids int64 (B, T), label int64 (B,))` of a stream of (texts, labels)
    batches of any size.

    With `shuffle_buffer` (training), examples are shuffled in a buffer of that many,
    seeded, and batched by length buckets; without it (validation and test), in their
    order, in narrower buckets. `pad_to_cap` pads every text to the cap instead, unbucketed,
    as `make_pipelines` does for models that see padding.

    Example:
    >>> # batches = stream_pipeline(examples, vectorizer, 64, batch_size=32, shuffle_buffer=1000)
    """

    def vectorize(texts, labels):
        token_ids = vectorizer(texts)  # (B, T)
        if pad_to_cap:
            return token_ids, labels
        # Each row without its trailing padding, at least one id (as `drop_padding`): cut
        # in the batch, ragged, instead of by one op per text.
        lengths = tf.maximum(tf.reduce_sum(tf.cast(token_ids != 0, tf.int32), axis=1), 1)
        return tf.RaggedTensor.from_tensor(token_ids, lengths=lengths), labels

    # rebatch: vectoriser-sized chunks of any source batch, without single texts between.
    dataset = (
        batches.rebatch(VECTORIZE_CHUNK)
        .map(vectorize, num_parallel_calls=tf.data.AUTOTUNE)
        .unbatch()
    )
    if shuffle_buffer is not None:
        dataset = dataset.shuffle(shuffle_buffer, seed=seed)
    if pad_to_cap:
        dataset = dataset.padded_batch(batch_size)
    else:
        if shuffle_buffer is not None:
            edges = [edge for edge in BUCKET_EDGES if edge < sequence_length]
        else:
            edges = list(range(EVALUATION_BUCKET_WIDTH, sequence_length, EVALUATION_BUCKET_WIDTH))
        dataset = dataset.bucket_by_sequence_length(
            lambda token_ids, label: tf.shape(token_ids, out_type=tf.int32)[0],
            bucket_boundaries=[edge + 1 for edge in edges],
            bucket_batch_sizes=[batch_size] * (len(edges) + 1),
            no_padding=True,
        ).map(lambda token_ids, labels: (token_ids.to_tensor(), labels))  # (B, T): padded
    if shuffle_buffer is not None:
        # Each worker reads its own shards (`data.streaming.sources`): tf.distribute must not
        # shard the stream again.
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
        dataset = dataset.with_options(options)
    return dataset.prefetch(tf.data.AUTOTUNE)
