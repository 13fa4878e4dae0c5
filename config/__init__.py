"""The run's settings: the one schema (`schema`, with its sections in `data_sections`,
`model_section` and `training_section`), config files read and written (`files`) and the
typed core under them (`typed`, and `yaml_and_overrides`: its values as text). None of them
imports TensorFlow, so a bad config is reported at once.

`from config import ModelConfig` names the schema's public parts; `config.files` is imported
by those who read or write config files.
"""

from config.schema import (
    ATTRIBUTION_METHODS,
    AUTO_CHECKPOINT,
    AUTO_CHECKPOINT_LAYERS,
    AUTO_TRAINING,
    BUILTIN_DATASETS,
    DATASET_SOURCES,
    ENCODER_FIELDS,
    FINE_TUNE_KINDS,
    LORA_TARGETS,
    POOLINGS,
    PRETRAINED_EMBEDDINGS,
    SECTIONS,
    STANDARDIZE,
    Config,
    ConfigError,
    DatasetConfig,
    FineTuneConfig,
    ModelConfig,
    OutputConfig,
    PretrainingConfig,
    ReplacedKeyError,
    TextConfig,
    TrainingConfig,
    auto_pretrained,
    earlier_version_message,
)

__all__ = [
    "ATTRIBUTION_METHODS",
    "AUTO_CHECKPOINT",
    "AUTO_CHECKPOINT_LAYERS",
    "AUTO_TRAINING",
    "BUILTIN_DATASETS",
    "Config",
    "ConfigError",
    "DATASET_SOURCES",
    "DatasetConfig",
    "ENCODER_FIELDS",
    "FINE_TUNE_KINDS",
    "FineTuneConfig",
    "LORA_TARGETS",
    "ModelConfig",
    "OutputConfig",
    "POOLINGS",
    "PRETRAINED_EMBEDDINGS",
    "PretrainingConfig",
    "ReplacedKeyError",
    "SECTIONS",
    "STANDARDIZE",
    "TextConfig",
    "TrainingConfig",
    "auto_pretrained",
    "earlier_version_message",
]
