"""The one entry point from the `dataset` and `text` config sections to training pipelines."""

import contextlib
import dataclasses
from collections.abc import Mapping
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from config import DatasetConfig, TextConfig
from data.pipelines.in_memory import make_pipelines
from data.reading.loading import load_text_splits, source_size
from data.reading.read_plan import read_plan
from data.splitting.hashed import in_sample, sample_rate
from data.splitting.text_splits import TextSplits
from data.streaming.streams import Streams, build_streamed
from tokenization import make_vectorizer, sequence_cap


@dataclasses.dataclass
class Datasets:
    """Pipelines of the three splits, the adapted vectorizer and the class names; read into
    memory, the splits' raw text (`splits`), streamed, the `streams` they are read from.

    A streamed training pipeline never ends: an epoch is `train_steps` batches of it."""

    pipelines: dict[str, tf.data.Dataset]
    vectorizer: keras.layers.TextVectorization
    class_names: list[str]
    splits: TextSplits | None = None
    streams: Streams | None = None
    train_steps: int | None = None
    description: str = ""  # what train.py prints: which path, why, what the passes found

    @property
    def streaming(self) -> bool:
        return self.streams is not None

    @property
    def sequence_length(self) -> int:
        """The token cap: `text.sequence_length`, or what `auto` resolved to."""
        return int(sequence_cap(self.vectorizer))

    def first_texts(self, split: str, count: int) -> np.ndarray:
        """The first `count` texts of `split` (an object array of `str`)."""
        if self.streams is not None:
            return self.streams.first_texts(split, count)
        return np.asarray(getattr(self.splits, split)[0][:count], dtype=object)

    @contextlib.contextmanager
    def stream_errors_named(self):
        """A bad row met mid-stream stops training as the DataError that names its shard
        and row: tf.data hands the training loop only an OpError carrying a traceback."""
        try:
            yield
        except tf.errors.OpError:
            if self.streams is None or not self.streams.errors:
                raise
            raise self.streams.errors[0] from None


def build_datasets(
    dataset: DatasetConfig | Mapping[str, Any],
    text: TextConfig | Mapping[str, Any],
    batch_size: int,
    seed: int,
    pad_to_cap: bool = False,
    vocabulary: list[str] | None = None,
    tokenizer=None,
    worker: tuple[int, int] = (0, 1),
    positions: bool = False,
) -> Datasets:
    """Loads or streams the splits, adapts the vectorizer on train and builds the pipelines.

    The sections may be config sections or plain mappings of them (checked the same way:
    a bad key or value is a ConfigError). `dataset.streaming` (`data.reading.read_plan`) picks
    the path. `pad_to_cap` pads every batch to the sequence length cap, for models that
    see padding (`model.mask_zero: false`); by default batches are padded to their longest
    text (see `make_pipelines`). A `vocabulary` (a pretrained encoder's) is used as it is
    instead of adapting one on the training texts; a `tokenizer` (a checkpoint's
    `WordPieceTokenizer`) replaces the vectoriser (reading pairs when `dataset` has two text
    columns). `worker` (index, count): the share of a multi-worker run's training stream
    this process reads (in memory, tf.distribute shards the batches). `positions`: in
    memory, each training element also carries its text's position in the split
    (`make_pipelines`); a stream's never do.

    Example:
    >>> # data = build_datasets({"name": "reuters_r8"}, {"sequence_length": 128}, 32, seed=0)
    >>> # data.pipelines["train"], data.class_names
    """
    dataset, text = DatasetConfig.of(dataset), TextConfig.of(text)
    plan = read_plan(dataset, source_size(dataset))
    if plan.streamed:
        streams, vectorizer, pipelines, steps, found = build_streamed(
            dataset, text, batch_size, seed, pad_to_cap, vocabulary, tokenizer, worker
        )
        return Datasets(
            pipelines,
            vectorizer,
            streams.class_names,
            streams=streams,
            train_steps=steps,
            description=f"{plan.describe(dataset)}\n{found}",
        )
    splits = load_text_splits(dataset)
    if dataset.is_pair and tokenizer is not None:
        tokenizer = tokenizer.for_pairs()
    texts = splits.train[0]
    rate = sample_rate(text.adapt_sample, len(texts))
    if rate < 1:  # The streaming path's sample: the same texts, so the same vocabulary.
        texts = texts[in_sample(tf.constant(texts), rate, dataset.split_seed).numpy()]
    vectorizer = make_vectorizer(text, texts, vocabulary, tokenizer)
    pipelines = make_pipelines(
        splits, vectorizer, batch_size, seed, pad_to_cap, positions=positions
    )
    return Datasets(
        pipelines, vectorizer, splits.class_names, splits=splits, description=plan.describe(dataset)
    )
