"""Streamed splits: the `dataset` section read in record batches into tf.data pipelines,
so that peak memory does not grow with the number of rows.

Before training: every shard is opened (one that cannot be is a DataError naming it), one
pass finds the classes and counts the rows unless `dataset.labels` (or a TFDS ClassLabel)
names them, and one pass over a hash-chosen sample of the training texts adapts the
vocabulary and the `auto` cap. Then the pipelines read the shards as training asks.
"""

import dataclasses
import math
from collections import Counter

import numpy as np
import tensorflow as tf
import tensorflow_datasets as tfds

from config import DatasetConfig, TextConfig
from data.pipelines.streamed import split_batches, stream_pipeline
from data.reading.loading import open_tfds
from data.reading.shards import shard_paths, sorted_class_names
from data.splitting.hashed import in_sample, sample_rate, split_edges, split_parts
from data.streaming.scan import check_counts, count_labels
from data.streaming.sources import FileSource, TfdsSource
from tokenization import make_vectorizer, sequence_cap

# Sampled texts are adapted on in batches of this many.
ADAPT_BATCH = 2048


@dataclasses.dataclass
class Streams:
    """The sources of a streamed dataset and what the passes before training found."""

    sources: dict  # split -> FileSource or TfdsSource; a carved split has none
    carved: tuple[str, ...]
    edges: list[int]
    split_seed: int
    class_names: list[str]
    rows: dict[str, int]  # per split; estimated when `counted` is False
    counted: bool
    labels_given: bool  # the class names are dataset.labels
    errors: list = dataclasses.field(default_factory=list)  # DataErrors raised mid-stream

    def _part(self, split: str) -> int | None:
        """Which hash part of its source `split` is; None: all of its own source."""
        if split in self.carved:
            return self.carved.index(split) + 1
        return 0 if split == "train" and self.carved else None

    def batches(self, split: str, worker=(0, 1), file_seed=None) -> tf.data.Dataset:
        """(texts, label ids) batches of `split`: its own source, or its part of train's."""
        source = self.sources.get(split, self.sources["train"])
        batches = source.batches(
            self.class_names, self.errors, worker, file_seed, self.labels_given
        )
        return split_batches(batches, self._part(split), self.edges, self.split_seed)

    def examples(self, split: str, worker=(0, 1)) -> tf.data.Dataset:
        """(text, label id) examples of `split`, one pass, in its order."""
        return self.batches(split, worker).unbatch()

    def sample(self, rate: float) -> tf.data.Dataset:
        """String batches of the vocabulary sample: the training texts `hashed.in_sample`
        keeps (their labels are not read)."""
        part = self._part("train")

        def keep(texts):
            if part is not None:
                texts = tf.boolean_mask(
                    texts, tf.equal(split_parts(texts, self.edges, self.split_seed), part)
                )
            return tf.boolean_mask(texts, in_sample(texts, rate, self.split_seed))

        return self.sources["train"].texts(self.errors).map(keep)

    def first_texts(self, split: str, count: int) -> np.ndarray:
        """The first `count` texts of `split`, in its order (a numpy object array)."""
        return np.array(
            [text.decode() for text, _ in self.examples(split).take(count).as_numpy_iterator()],
            dtype=object,
        )

    def describe(self, sample: float, worker=(0, 1)) -> str:
        """What the passes found, and which share of the training stream `worker` reads."""
        rows = "counted" if self.counted else "estimated"
        carved = f"; {' and '.join(self.carved)} carved by text hash" if self.carved else ""
        share = "all of them" if sample >= 1 else f"a {sample:.1%} sample"
        lines = [
            f"  {self.sources['train'].describe()}{carved}; {self.rows['train']:,} "
            f"training rows ({rows}); vocabulary from {share}"
        ]
        index, count = worker
        if count > 1:
            shards = len(getattr(self.sources["train"], "paths", ()))
            read = (
                f"{len(range(index, shards, count))} of the {shards} shards"
                if shards >= count
                else f"one row in {count} of every batch"
            )
            lines.append(f"  worker {index} of {count} trains on {read}")
        return "\n".join(lines)


def open_streams(dataset: DatasetConfig) -> Streams:
    """Opens the sources, then counts labels and rows in one pass unless they are given."""
    columns = (dataset.text_column, dataset.label_column)
    builder = None
    if dataset.train_file is not None:
        specs = {
            "train": dataset.train_file,
            "validation": dataset.validation_file,
            "test": dataset.test_file,
        }
        sources = {
            split: FileSource(shard_paths(spec, f"{split}_file"), *columns)
            for split, spec in specs.items()
            if spec is not None
        }
        name = dataset.train_file
    else:
        builder, requested = open_tfds(dataset)
        sources = {
            split: TfdsSource(builder, tfds_split, *columns)
            for split, tfds_split in requested.items()
        }
        name = f"dataset '{builder.name}'"
    for source in sources.values():
        source.check()
    carved = tuple(split for split in ("validation", "test") if split not in sources)
    edges = split_edges(carved, dataset.validation_fraction, dataset.test_fraction)
    class_names, given = dataset.labels, dataset.labels is not None
    if builder is not None:
        feature = builder.info.features[dataset.label_column]
        if isinstance(feature, tfds.features.ClassLabel):
            class_names, given = list(feature.names), False
    if class_names is not None:  # No pass: the rows are estimated.
        fractions = {"validation": dataset.validation_fraction, "test": dataset.test_fraction}
        rows = {split: source.rows_estimate() for split, source in sources.items()}
        total = rows["train"]
        for split in carved:
            rows[split] = round(total * fractions[split])
        rows["train"] = total - sum(rows[split] for split in carved)
        return Streams(
            sources,
            carved,
            edges,
            dataset.split_seed,
            list(class_names),
            rows,
            counted=False,
            labels_given=given,
        )
    parts = count_labels(sources["train"], edges, dataset.split_seed)
    counts = dict(zip(("train", *carved), parts, strict=True))
    class_names = sorted_class_names(sum(parts, start=Counter()))
    for split in ("validation", "test"):
        if split in sources:
            counts[split] = count_labels(sources[split], [], dataset.split_seed, class_names)[0]
    check_counts(name, counts, class_names, carved)
    rows = {split: sum(counter.values()) for split, counter in counts.items()}
    return Streams(
        sources,
        carved,
        edges,
        dataset.split_seed,
        class_names,
        rows,
        counted=True,
        labels_given=False,
    )


def build_streamed(
    dataset: DatasetConfig,
    text: TextConfig,
    batch_size: int,
    seed: int,
    pad_to_cap: bool,
    vocabulary=None,
    tokenizer=None,
    worker=(0, 1),
):
    """(Streams, vectorizer, pipelines, train steps per epoch, description) of a streamed
    dataset; worker `index` of `count` trains on its own shards (`FileSource.batches`)."""
    streams = open_streams(dataset)
    rate = sample_rate(text.adapt_sample, streams.rows["train"])
    # Every worker adapts on the same sample, read from all shards.
    sample = streams.sample(rate).unbatch().batch(ADAPT_BATCH)
    vectorizer = make_vectorizer(text, sample, vocabulary, tokenizer)
    cap = int(sequence_cap(vectorizer))
    pipelines = {
        "train": stream_pipeline(
            streams.batches("train", worker, file_seed=seed),
            vectorizer,
            cap,
            batch_size,
            dataset.shuffle_buffer,
            seed,
            pad_to_cap,
        ),
        **{
            split: stream_pipeline(
                streams.batches(split), vectorizer, cap, batch_size, pad_to_cap=pad_to_cap
            )
            for split in ("validation", "test")
        },
    }
    steps = max(1, math.ceil(streams.rows["train"] / batch_size))
    return streams, vectorizer, pipelines, steps, streams.describe(rate, worker)
