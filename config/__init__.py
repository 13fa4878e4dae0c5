"""The run's settings: the one schema (`schema`, with its sections in `data_sections`,
`model_section` and `training_section`), config files read and written (`files`) and the
typed core under them (`typed`, and `yaml_and_overrides`: its values as text). None of them
imports TensorFlow, so a bad config is reported at once.

`from config import ModelConfig` names the schema's public parts, whichever module of the
package holds them (this list is their one index); `config.files` is imported by those who
read or write config files.
"""

from config.data_sections import (
    BUILTIN_DATASETS,
    DATASET_SOURCES,
    STANDARDIZE,
    DatasetConfig,
    TextConfig,
)
from config.model_section import (
    AUTO_CHECKPOINT,
    AUTO_CHECKPOINT_LAYERS,
    ENCODER_FIELDS,
    FINE_TUNE_KINDS,
    LORA_TARGETS,
    POOLINGS,
    PRETRAINED_EMBEDDINGS,
    FineTuneConfig,
    ModelConfig,
    auto_pretrained,
)
from config.schema import (
    ATTRIBUTION_METHODS,
    SECTIONS,
    Config,
    OutputConfig,
    PretrainingConfig,
)
from config.training_section import AUTO_TRAINING, TrainingConfig
from config.typed import ConfigError, ReplacedKeyError, earlier_version_message

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
