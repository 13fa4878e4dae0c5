"""Loads the `dataset` config section into raw text splits: built-in, TFDS catalog or files."""

import numpy as np
import tensorflow_datasets as tfds

from config import DatasetConfig
from data.builders import BUILTIN_BUILDERS
from data.reading.labelled_files import load_file_splits
from data.reading.read_plan import read_plan
from data.reading.shards import human_size, shard_paths, total_bytes
from data.splitting.stratified import carve_splits
from data.splitting.text_splits import TextSplits
from runtime.errors import DataError
from tokenization.pairs import join_pairs


def get_builder(name: str, data_dir: str | None = None) -> tfds.core.DatasetBuilder:
    """The TFDS builder of a built-in or catalog dataset; unknown names are a DataError."""
    try:
        return tfds.builder(name, data_dir=data_dir)
    except tfds.core.registered.DatasetNotFoundError:
        raise DataError(
            f"unknown dataset '{name}'; use a built-in ({', '.join(BUILTIN_BUILDERS)}), a TFDS "
            "catalog name (see `tfds.list_builders()`) as dataset.tfds_name, or set "
            "dataset.train_file"
        ) from None


def prepare(builder: tfds.core.DatasetBuilder) -> None:
    """Prepares the dataset in its data dir, turning any failure into a one-line DataError."""
    try:
        builder.download_and_prepare()
    except DataError:
        raise
    except Exception as error:  # Download failures surface as many exception types.
        reason = (str(error).strip().splitlines() or [""])[0][:200]
        raise DataError(
            f"dataset '{builder.name}' is not prepared in {builder.data_dir_root} and could not "
            f"be downloaded ({type(error).__name__}: {reason}); prepare it where the network "
            "reaches its source and copy the folder into that data dir"
        ) from None


def _check_split_name(builder, split: str) -> None:
    known_splits = list(builder.info.splits)
    # "train[:50%]+test" names the splits train and test.
    named = {part.split("[")[0].strip() for part in split.split("+")}
    # Mocked or not yet computed infos know no splits; TFDS then reports the bad name itself.
    if known_splits and not named <= set(known_splits):
        raise DataError(
            f"dataset '{builder.name}' has no split '{split}' (splits: {', '.join(known_splits)}); "
            "fix train_split/validation_split/test_split"
        )


def _read_split(builder, split: str, text_key: str | list[str], label_key: str):
    keys = [text_key] if isinstance(text_key, str) else list(text_key)
    dataset = builder.as_dataset(split=split).map(
        lambda example: (tuple(example[key] for key in keys), example[label_key])
    )
    sides, labels = [[] for _ in keys], []
    for text_batches, label_batch in dataset.batch(4096).as_numpy_iterator():
        for side, batch in zip(sides, text_batches, strict=True):
            side.extend(text.decode("utf-8", errors="replace") for text in batch)
        labels.append(label_batch)
    labels = np.concatenate(labels) if labels else np.zeros(0, dtype=np.int64)
    if len(keys) == 1:
        return np.array(sides[0], dtype=object), labels
    try:
        return join_pairs(*sides), labels
    except ValueError as error:
        raise DataError(f"dataset '{builder.name}' split '{split}': {error}") from None


def open_tfds(dataset: DatasetConfig) -> tuple[tfds.core.DatasetBuilder, dict[str, str]]:
    """(the prepared builder, {split: its TFDS split name} of the splits it gives) of a
    built-in or catalog dataset; bad names, features and splits are DataErrors."""
    builder = get_builder(dataset.tfds_builder_name, dataset.data_dir)
    features = builder.info.features
    text_keys = [dataset.text_column] if not dataset.is_pair else dataset.text_column
    for role, key in [("text_column", key) for key in text_keys] + [
        ("label_column", dataset.label_column)
    ]:
        if key not in features:
            raise DataError(
                f"dataset '{builder.name}' has no feature '{key}' (features: "
                f"{', '.join(features)}); set dataset.{role} to one of them"
            )
    prepare(builder)
    validation_split = dataset.validation_split
    if validation_split is None and dataset.tfds_builder_name in BUILTIN_BUILDERS:
        validation_split = "validation"  # Built-ins ship their documented validation split.
    requested = {
        "train": dataset.train_split,
        "validation": validation_split,
        "test": dataset.test_split,
    }
    requested = {split: name for split, name in requested.items() if name is not None}
    for name in requested.values():
        _check_split_name(builder, name)
    return builder, requested


def split_bytes(builder: tfds.core.DatasetBuilder, split: str) -> int:
    """The size of a TFDS split's records on disk (of the whole dataset for a slice TFDS
    cannot size)."""
    try:
        return int(builder.info.splits[split].num_bytes)
    except (KeyError, ValueError, AttributeError):
        return int(builder.info.dataset_size or 0)


def source_size(dataset: DatasetConfig) -> int:
    """Bytes on disk of the training source: the files of dataset.train_file, or the TFDS
    training split (prepared first)."""
    if dataset.train_file is not None:
        return total_bytes(shard_paths(dataset.train_file))
    builder, requested = open_tfds(dataset)
    return split_bytes(builder, requested["train"])


def streamed_size(dataset: DatasetConfig) -> str | None:
    """The training source's size on disk (`human_size`) when `dataset.streaming` streams
    it, else None."""
    plan = read_plan(dataset, source_size(dataset))
    return human_size(plan.size_bytes) if plan.streamed else None


def load_tfds_splits(dataset: DatasetConfig) -> TextSplits:
    """Loads a built-in or TFDS catalog dataset, carving missing splits out of train.

    Example:
    >>> # load_tfds_splits(DatasetConfig(tfds_name="imdb_reviews", text_column="text"))
    """
    builder, requested = open_tfds(dataset)
    label_feature = builder.info.features[dataset.label_column]
    splits = {
        split: _read_split(builder, name, dataset.text_column, dataset.label_column)
        for split, name in requested.items()
    }

    if isinstance(label_feature, tfds.features.ClassLabel):
        class_names = list(label_feature.names)
    elif splits["train"][1].dtype.kind in "OSU":  # String labels: ids by sorted train label.
        class_names = dataset.labels or sorted({label.decode() for label in splits["train"][1]})
        label_ids = {name.encode(): index for index, name in enumerate(class_names)}
        for split, (texts, labels) in splits.items():
            unknown = sorted({label.decode() for label in labels if label not in label_ids})
            if unknown:
                raise DataError(
                    f"dataset '{builder.name}' split '{requested[split]}' column "
                    f"'{dataset.label_column}' has labels {unknown} not in train; pick other splits"
                )
            splits[split] = (texts, np.array([label_ids[label] for label in labels]))
    else:
        class_names = [str(index) for index in range(int(splits["train"][1].max()) + 1)]

    carved = tuple(split for split in ("validation", "test") if split not in splits)
    method = read_plan(dataset, split_bytes(builder, requested["train"])).split_method
    splits = carve_splits(
        method, splits, dataset.validation_fraction, dataset.test_fraction, dataset.split_seed
    )
    return TextSplits(**splits, class_names=class_names).check(f"dataset '{builder.name}'", carved)


def load_text_splits(dataset: DatasetConfig | dict) -> TextSplits:
    """Raw texts and int64 labels of train, validation and test, plus the class names.

    Example:
    >>> # splits = load_text_splits({"name": "reuters_r8", "data_dir": "/tmp/tfds"})
    >>> # splits.sizes() == {"train": 4934, "validation": 551, "test": 2189}
    """
    dataset = DatasetConfig.of(dataset)
    if dataset.train_file is not None:
        return load_file_splits(dataset)
    return load_tfds_splits(dataset)
