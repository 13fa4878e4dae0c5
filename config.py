"""The typed config schema for training runs: defaults, YAML loading, overrides, validation.

Every field has a default and a comment here (detectron2-style); config files in
`configs/` hold only what differs. Loading rejects unknown keys, wrong types and
impossible values with a one-line `ConfigError` that names the key, before any data or
model work starts. The loaded config is frozen.

Example:

>>> config = load_config(None, ["dataset.name=bbc_news", "model.num_layers=4", "training.epochs=3"])
>>> config.model.num_layers, config.training.epochs
(4, 3)
>>> try:
...     load_config(None, ["dataset.name=bbc_news", "model.num_heds=4"])
... except ConfigError as error:
...     print(str(error).split(" (")[0])
model.num_heds: unknown key
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A user error in a config file or override; the message is one line naming the key."""


@dataclass(frozen=True)
class DatasetConfig:
    # A built-in dataset: rotten_tomatoes, reuters_r8, reuters_r52, twenty_newsgroups,
    # bbc_news. No default: a config names its data here or in train_file.
    name: str | None = None
    # Where built-in datasets are cached; null uses the data package's default.
    data_dir: str | None = None
    # CSV/Parquet files instead of a built-in dataset. Without validation_file/test_file,
    # those splits are carved out of the training file (fractions below).
    train_file: str | None = None
    validation_file: str | None = None
    test_file: str | None = None
    # Any dataset of the TFDS catalog by name ("imdb_reviews", "ag_news_subset"), for
    # machines that can download it or already have it in data_dir.
    tfds_name: str | None = None
    # Its split names; a null validation/test split is carved out of train (fractions
    # below). Slices such as "train[:50%]" work.
    train_split: str = "train"
    validation_split: str | None = None
    test_split: str | None = "test"
    # Column names in the files above, or feature keys of the TFDS dataset.
    text_column: str = "text"
    label_column: str = "label"
    # Fractions held out of the training data when a split is missing. The test split is
    # never used for model selection.
    validation_fraction: float = 0.1
    test_fraction: float = 0.1
    # Seed of the held-out splits: separate from training.seed so that every training
    # seed is scored on the same test examples.
    split_seed: int = 0


@dataclass(frozen=True)
class TextConfig:
    # Vocabulary of the TextVectorization layer, including the padding (0) and OOV (1) ids.
    vocabulary_size: int = 20000
    # Tokens per example: longer texts are truncated, shorter ones padded with id 0.
    sequence_length: int = 256
    # TextVectorization standardisation: lower_and_strip_punctuation, lower,
    # strip_punctuation or none.
    standardize: str = "lower_and_strip_punctuation"


@dataclass(frozen=True)
class ModelConfig:
    # Width of the token embeddings and of every block's output.
    d_model: int = 128
    # Attention heads per block; d_model must be divisible by it.
    num_heads: int = 4
    # Size of each head; null means d_model // num_heads, so the heads split d_model.
    key_dim: int | None = None
    # Number of TransformerEncoderBlocks.
    num_layers: int = 2
    # Hidden size of each block's feed-forward network.
    intermediate_dim: int = 256
    # Dropout after the embeddings, inside the blocks and before the head.
    dropout: float = 0.1
    # Dropout on the attention weights.
    attention_dropout: float = 0.0
    # Activation of the feed-forward networks: relu or gelu.
    activation: str = "relu"
    # learned (one vector per position, starting as small as the token vectors) or
    # sinusoidal (no weights). Learned trains faster from scratch on our datasets.
    positional_encoding: str = "learned"
    # Mask padding (id 0) in attention and pooling. false reproduces tutorial models that
    # attend to and average over padding.
    mask_zero: bool = True
    # Pre-norm blocks (LayerNorm before attention/FFN) train more stably when deeper;
    # false gives the original post-norm Transformer.
    norm_first: bool = True
    # Epsilon of every LayerNormalization.
    layer_norm_epsilon: float = 1e-5
    # How the sequence becomes one vector: mean or max over real tokens (padding excluded),
    # or cls (a learned token prepended to the sequence; its final state is used).
    pooling: str = "mean"
    # Width of an optional ReLU layer between pooling and the softmax; 0 means none.
    head_hidden_dim: int = 0


@dataclass(frozen=True)
class TrainingConfig:
    # Global batch size (split across replicas under a distribution strategy).
    batch_size: int = 32
    # Maximum epochs; early stopping usually ends the run sooner.
    epochs: int = 10
    # Cap on batches per epoch (null: the whole training split). Small values make CI
    # configs train in seconds.
    steps_per_epoch: int | None = None
    # adamw, adam or sgd (with momentum 0.9).
    optimizer: str = "adamw"
    # Peak learning rate, reached after warmup.
    learning_rate: float = 1e-3
    # Decoupled weight decay (adamw only).
    weight_decay: float = 0.01
    # Fraction of all training steps spent warming the learning rate up from 0.
    warmup_fraction: float = 0.1
    # After warmup: cosine (decay to 0 at the last epoch) or constant.
    schedule: str = "cosine"
    # Clip each gradient update to this global norm; null disables clipping.
    clipnorm: float | None = 1.0
    # Label smoothing of the cross-entropy loss (regularises overconfident heads).
    label_smoothing: float = 0.0
    # Stop after this many epochs without a better `monitor` value and restore the best
    # weights; 0 disables early stopping.
    early_stopping_patience: int = 3
    # What picks the best epoch (checkpoint and early stopping): val_loss, or
    # val_accuracy where label smoothing makes the loss a poor guide to accuracy.
    monitor: str = "val_loss"
    # Seeds weights, dropout and shuffling; with op determinism, two runs of the same
    # command give the same metrics on CPU.
    seed: int = 0
    # mixed_float16 compute (float32 weights and softmax); useful on GPUs.
    mixed_precision: bool = False
    # XLA-compile the train step.
    jit_compile: bool = False
    # none (one device), mirrored (MirroredStrategy over local GPUs, or all logical CPUs
    # when there is no GPU) or multi_worker (MultiWorkerMirroredStrategy from TF_CONFIG).
    distribution: str = "none"
    # Number of validation examples (the first N) whose attention heatmaps are written to
    # TensorBoard (logs/attention, Images tab) after every epoch; 0 turns them off.
    attention_images: int = 0


@dataclass(frozen=True)
class OutputConfig:
    # Parent folder of run folders.
    root: str = "runs"
    # Run folder name under root; null uses the config file's name (default.yaml -> default).
    name: str | None = None


@dataclass(frozen=True)
class Config:
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    text: TextConfig = field(default_factory=TextConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    output: OutputConfig = field(default_factory=OutputConfig)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return dataclasses.asdict(self)

    def run_name(self) -> str:
        return self.output.name or "run"


BUILTIN_DATASETS = ("rotten_tomatoes", "reuters_r8", "reuters_r52", "twenty_newsgroups", "bbc_news")
_CHOICES = {
    "dataset.name": BUILTIN_DATASETS,
    "text.standardize": ("lower_and_strip_punctuation", "lower", "strip_punctuation", "none"),
    "model.activation": ("relu", "gelu"),
    "model.positional_encoding": ("sinusoidal", "learned"),
    "model.pooling": ("mean", "max", "cls"),
    "training.optimizer": ("adamw", "adam", "sgd"),
    "training.schedule": ("cosine", "constant"),
    "training.distribution": ("none", "mirrored", "multi_worker"),
    "training.monitor": ("val_loss", "val_accuracy"),
}
_NULL_WORDS = ("null", "none", "~")


def _section_types() -> dict[str, type]:
    return {f.name: typing.get_type_hints(Config)[f.name] for f in dataclasses.fields(Config)}


def _field_types(section_cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(section_cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(section_cls)}


def _unwrap_optional(annotation: Any) -> tuple[type, bool]:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0], True
    return annotation, False


_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _check_type(key: str, value: Any, annotation: Any) -> Any:
    """Returns `value` converted to the field's type, or raises ConfigError naming `key`."""
    base, optional = _unwrap_optional(annotation)
    if value is None:
        if optional:
            return None
        raise ConfigError(f"{key}: must not be null (expected {_TYPE_WORDS[base]})")
    # bool is a subclass of int: `epochs: true` must not pass as 1.
    if base is bool and isinstance(value, bool):
        return value
    if base is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if base is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if base is str and isinstance(value, str):
        return value
    expected = _TYPE_WORDS[base] + (" or null" if optional else "")
    raise ConfigError(f"{key}: expected {expected}, got {value!r} ({type(value).__name__})")


def _parse_override_value(key: str, raw: str, annotation: Any) -> Any:
    """Parses the text after `=` in `--set key=value` as the field's type."""
    base, optional = _unwrap_optional(annotation)
    text = raw.strip()
    if optional and text.lower() in _NULL_WORDS:
        return None
    try:
        if base is bool:
            words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
            return words[text.lower()]
        if base is int:
            return int(text)
        if base is float:
            return float(text)
    except (KeyError, ValueError):
        expected = _TYPE_WORDS[base] + (" or null" if optional else "")
        raise ConfigError(f"{key}: expected {expected}, got {raw!r}") from None
    return text


def _known(names) -> str:
    return ", ".join(names)


def _resolve_key(key: str) -> tuple[str, str, Any]:
    """Splits 'section.field' and returns (section, field, annotation); unknown -> ConfigError."""
    sections = _section_types()
    parts = key.split(".")
    if len(parts) != 2 or not all(parts):
        raise ConfigError(f"{key}: keys look like section.field (sections: {_known(sections)})")
    section, name = parts
    if section not in sections:
        raise ConfigError(f"{section}: unknown section (known: {_known(sections)})")
    field_types = _field_types(sections[section])
    if name not in field_types:
        raise ConfigError(f"{key}: unknown key (known: {_known(field_types)})")
    return section, name, field_types[name]


def parse_overrides(overrides: list[str] | tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Parses ['model.num_layers=4', ...] into {'model': {'num_layers': 4}} with typed values."""
    parsed: dict[str, dict[str, Any]] = {}
    for item in overrides:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ConfigError(f"{key}: overrides look like section.field=value, got {item!r}")
        section, name, annotation = _resolve_key(key)
        parsed.setdefault(section, {})[name] = _parse_override_value(key, raw, annotation)
    return parsed


def _merge(base: dict[str, dict[str, Any]], update: dict[str, dict[str, Any]]) -> None:
    for section, values in update.items():
        base.setdefault(section, {}).update(values)


def _read_yaml(path: str | Path) -> dict[str, dict[str, Any]]:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config file ({error.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" line {where.line + 1}" if where else ""
        raise ConfigError(f"{path}:{line} is not valid YAML") from None
    if data is None:
        return {}
    sections = _section_types()
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections ({_known(sections)})")
    for section, values in data.items():
        if section not in sections:
            raise ConfigError(f"{section}: unknown section (known: {_known(sections)})")
        if values is None:
            data[section] = {}
        elif not isinstance(values, dict):
            raise ConfigError(f"{section}: expected a mapping of fields, got {values!r}")
        else:
            for name in values:
                _resolve_key(f"{section}.{name}")
    return data


def _validate_values(config: Config) -> None:
    """Impossible values -> ConfigError naming the first offending key."""

    def fail(key: str, message: str, value: Any) -> None:
        raise ConfigError(f"{key}: {message}, got {value!r}")

    for key, choices in _CHOICES.items():
        section, name = key.split(".")
        value = getattr(getattr(config, section), name)
        if value is not None and value not in choices:
            fail(key, f"must be one of {', '.join(choices)}", value)

    d, t, m, tr = config.dataset, config.text, config.model, config.training
    sources = {"name": d.name, "tfds_name": d.tfds_name, "train_file": d.train_file}
    given = {key: value for key, value in sources.items() if value is not None}
    if not given:
        raise ConfigError(
            "dataset.name: no dataset given: set dataset.name to a built-in dataset "
            f"({', '.join(BUILTIN_DATASETS)}), dataset.tfds_name to a TFDS catalog name or "
            "dataset.train_file to a CSV/TSV/JSONL/Parquet file"
        )
    if len(given) > 1:
        second = list(given)[1]
        raise ConfigError(
            f"dataset.{second}: give one of dataset.name, dataset.tfds_name or "
            f"dataset.train_file, not several ({', '.join(f'{k}={v!r}' for k, v in given.items())})"
        )
    for key, value in (
        ("dataset.validation_fraction", d.validation_fraction),
        ("dataset.test_fraction", d.test_fraction),
    ):
        if not 0.0 < value < 1.0:
            fail(key, "must be in (0, 1)", value)
    if d.validation_fraction + d.test_fraction >= 1.0:
        fail("dataset.test_fraction", "validation_fraction + test_fraction must be < 1",
             d.test_fraction)

    # The vocabulary holds at least the padding and OOV ids plus one real token.
    if t.vocabulary_size < 3:
        fail("text.vocabulary_size", "must be at least 3 (padding, OOV and one token)",
             t.vocabulary_size)
    positive = {
        "text.sequence_length": t.sequence_length,
        "model.d_model": m.d_model,
        "model.num_heads": m.num_heads,
        "model.num_layers": m.num_layers,
        "model.intermediate_dim": m.intermediate_dim,
        "training.batch_size": tr.batch_size,
        "training.epochs": tr.epochs,
        "training.learning_rate": tr.learning_rate,
        "model.layer_norm_epsilon": m.layer_norm_epsilon,
    }
    if m.key_dim is not None:
        positive["model.key_dim"] = m.key_dim
    if tr.steps_per_epoch is not None:
        positive["training.steps_per_epoch"] = tr.steps_per_epoch
    if tr.clipnorm is not None:
        positive["training.clipnorm"] = tr.clipnorm
    for key, value in positive.items():
        if not value > 0 or (isinstance(value, float) and not math.isfinite(value)):
            fail(key, "must be positive", value)
    if m.d_model % m.num_heads:
        raise ConfigError(
            f"model.num_heads: d_model must be divisible by num_heads, "
            f"got d_model={m.d_model}, num_heads={m.num_heads}"
        )
    for key, value in (
        ("model.dropout", m.dropout),
        ("model.attention_dropout", m.attention_dropout),
        ("training.label_smoothing", tr.label_smoothing),
        ("training.warmup_fraction", tr.warmup_fraction),
    ):
        if not 0.0 <= value < 1.0:
            fail(key, "must be in [0, 1)", value)
    for key, value in (
        ("model.head_hidden_dim", m.head_hidden_dim),
        ("training.weight_decay", tr.weight_decay),
        ("training.early_stopping_patience", tr.early_stopping_patience),
        ("training.attention_images", tr.attention_images),
    ):
        if value < 0:
            fail(key, "must not be negative", value)
    if not config.output.root:
        fail("output.root", "must not be empty", config.output.root)
    if config.output.name is not None and (
        not config.output.name or "/" in config.output.name or config.output.name.startswith(".")
    ):
        fail("output.name", "must be a plain folder name", config.output.name)


def build_config(values: dict[str, dict[str, Any]]) -> Config:
    """Builds and validates a frozen Config from {'section': {'field': value}}."""
    sections = _section_types()
    built = {}
    for section, section_cls in sections.items():
        field_types = _field_types(section_cls)
        checked = {}
        for name, value in (values.get(section) or {}).items():
            key = f"{section}.{name}"
            if name not in field_types:
                raise ConfigError(f"{key}: unknown key (known: {_known(field_types)})")
            checked[name] = _check_type(key, value, field_types[name])
        built[section] = section_cls(**checked)
    config = Config(**built)
    _validate_values(config)
    return config


def load_config(path: str | Path | None, overrides: list[str] | tuple[str, ...] = ()) -> Config:
    """Loads a YAML config over the defaults, applies `section.field=value` overrides, validates.

    Args:
        path: a YAML file holding only what differs from the defaults, or None for defaults.
        overrides: `section.field=value` strings; values are parsed as the field's type.

    Returns:
        A frozen `Config`. When `output.name` is unset it becomes the file's stem.

    Raises:
        ConfigError: one line naming the offending key.
    """
    values: dict[str, dict[str, Any]] = {}
    if path is not None:
        _merge(values, _read_yaml(path))
    _merge(values, parse_overrides(list(overrides)))
    config = build_config(values)
    if config.output.name is None:
        name = Path(path).stem if path is not None else "run"
        config = dataclasses.replace(
            config, output=dataclasses.replace(config.output, name=name)
        )
    return config


def dump_config(config: Config) -> str:
    """The resolved config as YAML that `load_config` reads back to an equal Config."""
    return yaml.safe_dump(config.to_dict(), sort_keys=False)
