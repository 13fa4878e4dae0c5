"""A split's rows as a tf.data stream of (texts, label ids) batches, never held whole: the
user's shards read by pyarrow record batch by record batch, or a TFDS split read through
`as_dataset`. Each source also checks that it opens before any training, estimates its
rows, and gives its labels in batches for the one pass that finds the classes
(`scan`).
"""

import dataclasses
import functools
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import tensorflow as tf
import tensorflow_datasets as tfds

from data.reading.record_batches import BLOCK_BYTES, check_columns, read_batches
from data.reading.shards import label_ids, row_name
from runtime.errors import DataError

BATCHES = (tf.TensorSpec((None,), tf.string), tf.TensorSpec((None,), tf.int64))
# Shards read at once, round robin: more mixes the training stream better, each costs a
# record batch of memory.
CYCLE_LENGTH = 8
# TFDS examples are taken in batches of this many, as the pyarrow sources give theirs.
TFDS_BATCH = 4096


@dataclasses.dataclass
class FileSource:
    """The user's shards of one split (`data.reading.shards.shard_paths`)."""

    paths: list[pathlib.Path]
    text_column: str
    label_column: str

    def describe(self) -> str:
        count = len(self.paths)
        return f"{count} {self.paths[0].suffix[1:]} shard{'s' * (count > 1)}"

    def check(self) -> None:
        """Opens every shard and finds its columns: one that cannot is a DataError naming it."""
        for path in self.paths:
            check_columns(
                path, {"text_column": self.text_column, "label_column": self.label_column}
            )

    def rows_estimate(self) -> int:
        """The rows: Parquet's footers count them; CSV and JSON Lines are estimated from
        the bytes per row of each shard's first record batch."""
        rows = 0
        for path in self.paths:
            if path.suffix == ".parquet":
                rows += pq.ParquetFile(path).metadata.num_rows
                continue
            _, (labels,) = next(read_batches(path, [self.label_column]), (0, [[]]))
            block = min(path.stat().st_size, BLOCK_BYTES)
            rows += round(len(labels) * path.stat().st_size / max(block, 1))
        return rows

    def label_batches(self, with_texts: bool):
        """(how an error names a row, first row, labels, texts or None) per record batch,
        for the scan."""
        columns = [self.label_column] + [self.text_column] * with_texts
        for path in self.paths:
            for row, arrays in read_batches(path, columns):
                texts = _numpy(arrays[1]) if with_texts else None
                yield functools.partial(row_name, path), row, arrays[0], texts

    def texts(self, errors: list) -> tf.data.Dataset:
        """String batches of the text column alone, every shard in name order: labels are
        neither read nor checked (the vocabulary sample needs none)."""
        generate = functools.partial(
            _shard_batches,
            columns=[self.text_column],
            errors=errors,
            convert=lambda path, row, arrays: _numpy(arrays[0]),
        )
        return tf.data.Dataset.from_tensor_slices([str(path) for path in self.paths]).flat_map(
            lambda path: tf.data.Dataset.from_generator(
                generate, args=(path,), output_signature=BATCHES[0]
            )
        )

    def batches(
        self,
        class_names: list[str],
        errors: list,
        worker=(0, 1),
        file_seed: int | None = None,
        given: bool = False,
    ) -> tf.data.Dataset:
        """(texts, label ids) batches of the shards, read round robin; with `file_seed`,
        endless, in a new seeded file order each pass. Worker `index` of `count` reads
        shards index, index + count, ... when there are enough, else its share of rows.
        `given`: the class names are `dataset.labels` (an error says so).

        A bad row raises a DataError naming shard and row, also appended to `errors`.
        """
        index, count = worker
        paths = self.paths[index::count] if len(self.paths) >= count else self.paths

        def with_ids(path, row, arrays):
            return _numpy(arrays[0]), label_ids(
                arrays[1],
                class_names,
                lambda index: row_name(path, row + index),
                self.label_column,
                given,
            )

        generate = functools.partial(
            _shard_batches,
            columns=[self.text_column, self.label_column],
            errors=errors,
            convert=with_ids,
        )
        files = tf.data.Dataset.from_tensor_slices([str(path) for path in paths])
        if file_seed is not None:
            files = files.shuffle(
                len(paths), seed=file_seed, reshuffle_each_iteration=True
            ).repeat()
        dataset = files.interleave(
            lambda path: tf.data.Dataset.from_generator(
                generate, args=(path,), output_signature=BATCHES
            ),
            cycle_length=min(len(paths), CYCLE_LENGTH),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True,
        )
        return dataset if len(self.paths) >= count else rows_of_worker(dataset, worker)


def _numpy(strings: pa.Array):
    return strings.to_numpy(zero_copy_only=False)


def _shard_batches(path: bytes, columns: list[str], errors: list, convert):
    """`convert(path, first row, arrays)` of each record batch of the shard (its path as
    tf.data passes it). A DataError is also appended to `errors`, because tf.data hands the
    training loop only an OpError carrying its traceback."""
    path = pathlib.Path(path.decode())
    try:
        for row, arrays in read_batches(path, columns):
            yield convert(path, row, arrays)
    except DataError as error:
        errors.append(error)
        raise


def rows_of_worker(dataset: tf.data.Dataset, worker) -> tf.data.Dataset:
    """Worker `index` of `count` keeps rows index, index + count, ... of every batch: each
    worker reads the same batches, so the workers' rows never overlap."""
    index, count = worker
    return dataset.map(lambda texts, labels: (texts[index::count], labels[index::count]))


@dataclasses.dataclass
class TfdsSource:
    """One split of a prepared TFDS dataset (`split`: a name or a slice like train[:50%])."""

    builder: tfds.core.DatasetBuilder
    split: str
    text_column: str
    label_column: str

    def describe(self) -> str:
        return f"TFDS '{self.builder.name}' split {self.split}"

    def check(self) -> None:
        """The builder was opened and prepared by `data.reading.loading`; nothing more to check."""

    def rows_estimate(self) -> int:
        """The split's examples, from the dataset's info, else counted in one pass."""
        try:
            return int(self.builder.info.splits[self.split].num_examples)
        except KeyError:  # An info without split sizes (TFDS' mock data, say).
            return sum(len(labels) for _, _, labels, _ in self.label_batches(with_texts=False))

    def _examples(self, shuffle_seed=None, input_context=None) -> tf.data.Dataset:
        read_config = tfds.ReadConfig(
            # TFDS would cache small splits in memory itself.
            try_autocache=False,
            shuffle_seed=shuffle_seed,
            input_context=input_context,
            shuffle_reshuffle_each_iteration=shuffle_seed is not None,
        )
        dataset = self.builder.as_dataset(
            split=self.split, shuffle_files=shuffle_seed is not None, read_config=read_config
        )
        return dataset.map(
            lambda example: (example[self.text_column], example[self.label_column])
        ).batch(TFDS_BATCH)

    def label_batches(self, with_texts: bool):
        """(how an error names a row, first row, labels, texts or None) per batch, for the
        scan."""
        row = 0

        def name(row):
            return f"dataset '{self.builder.name}' split '{self.split}' row {row + 1}"

        for texts, labels in self._examples().as_numpy_iterator():
            labels = pa.array(
                [label.decode() if isinstance(label, bytes) else str(label) for label in labels],
                pa.string(),
            )
            yield name, row, labels, texts if with_texts else None
            row += len(labels)

    def _num_shards(self) -> int:
        """The files the split spans; 0 when the info does not say (a slice may not)."""
        try:
            return int(getattr(self.builder.info.splits[self.split], "num_shards", 0) or 0)
        except KeyError:
            return 0

    def texts(self, errors: list) -> tf.data.Dataset:
        """String batches of the texts alone, in the split's order."""
        return self._examples().map(lambda texts, labels: texts)

    def batches(
        self,
        class_names: list[str],
        errors: list,
        worker=(0, 1),
        file_seed: int | None = None,
        given: bool = False,
    ) -> tf.data.Dataset:
        """(texts, label ids) batches; with `file_seed`, endless and shuffled by file.

        Under several workers each reads its own files when the split has enough, else
        every worker reads all and keeps every n-th batch."""
        index, count = worker
        context = None
        if count > 1 and self._num_shards() >= count:
            context = tf.distribute.InputContext(num_input_pipelines=count, input_pipeline_id=index)
        dataset = self._examples(file_seed, context)
        if count > 1 and context is None:
            dataset = rows_of_worker(dataset, worker)
        feature = self.builder.info.features[self.label_column]
        if not isinstance(feature, tfds.features.ClassLabel):  # Ids by label name.
            table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant(class_names), tf.range(len(class_names), dtype=tf.int64)
                ),
                -1,
            )
            dataset = dataset.map(
                lambda texts, labels: (
                    texts,
                    table.lookup(
                        labels if labels.dtype == tf.string else tf.strings.as_string(labels)
                    ),
                )
            )
        dataset = dataset.map(lambda texts, labels: (texts, tf.cast(labels, tf.int64)))
        return dataset.repeat() if file_seed is not None else dataset
