"""The one config schema: every setting of a run, its default, its comment and its checks.

Every field has a default and a comment here (detectron2-style); config files in `configs/`
hold only what differs. A section checks itself when it is built, so the data layer takes
`config.dataset` and `config.text` (or a plain mapping, through `from_mapping`) under the
same rules. Errors are one-line `ConfigError`s that name the key, raised before any data or
model work: this module imports neither TensorFlow nor Keras. The data sections (`dataset`,
`text`) are written in `config/data_sections.py`, the model section (with what
`model.pretrained: auto` resolves to) in `config/model_section.py`, the training section in
`config/training_section.py`; the package (`config/__init__.py`) exports them all.
Reading, writing and documenting config files (`load_config`, `dump_config`, ...) is
`config/files.py`'s.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from config.data_sections import (
    DatasetConfig,
    TextConfig,
)
from config.model_section import (
    ModelConfig,
)
from config.training_section import TrainingConfig
from config.typed import (
    ConfigError,
    Section,
    option,
)

# inspection.methods.attribution's methods, named here so that predict.py checks --method before
# TensorFlow loads.
ATTRIBUTION_METHODS = (
    "rollout",
    "last_attention",
    "gradient_x_input",
    "conservative_gradient_x_input",
    "attention_gradient",
    "integrated_gradients",
    "leave_one_out",
    "random",
)


@dataclass(frozen=True)
class PretrainingConfig(Section):
    """pretrain.py's settings; it takes `dataset`, `text`, `model` and `training` (epochs,
    batch size, optimizer, learning rate, early stopping, seed) from the sections above."""

    section: ClassVar[str] = "pretraining"
    # What the encoder reads: train (the dataset's training texts), builtin (the training
    # texts of every built-in dataset) or a UTF-8 text file, one text per line.
    corpus: str = option("train", (bool, "must not be empty"))
    # Share of each text's known tokens hidden and predicted (masked language modelling).
    mask_fraction: float = option(0.15, (lambda value: 0 < value < 1, "must be in (0, 1)"))
    # Share of the corpus held out to pick the best epoch (by masked-token loss).
    validation_fraction: float = option(0.05, (lambda value: 0 < value < 1, "must be in (0, 1)"))


@dataclass(frozen=True)
class OutputConfig(Section):
    section: ClassVar[str] = "output"
    # Parent folder of run folders.
    root: str = option("runs", (bool, "must not be empty"))
    # Run folder name under root; null uses the config file's name (default.yaml -> default).
    name: str | None = option(
        None,
        (
            lambda name: name and "/" not in name and not name.startswith("."),
            "must be a plain folder name",
        ),
    )
    # Keep checkpoints/best.weights.h5 in a finished run: the best epoch's weights with the
    # optimizer's state (three times model.keras, which holds that epoch already). false:
    # removed once the run is final.
    keep_checkpoints: bool = False


@dataclass(frozen=True)
class Config:
    dataset: DatasetConfig
    text: TextConfig = field(default_factory=TextConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    output: OutputConfig = field(default_factory=OutputConfig)
    pretraining: PretrainingConfig = field(default_factory=PretrainingConfig)

    def __post_init__(self):
        multi_label, monitor = self.dataset.is_multi_label, self.training.monitor
        if multi_label and monitor == "val_accuracy":
            raise ConfigError(
                "training.monitor: multi-label runs pick their best epoch by val_micro_f1 or "
                "val_loss; set one of them"
            )
        if not multi_label and monitor == "val_micro_f1":
            raise ConfigError(
                "training.monitor: val_micro_f1 is for multi-label data "
                "(dataset.label_separator or dataset.label_columns); use val_accuracy or val_loss"
            )

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return dataclasses.asdict(self)

    def run_name(self) -> str:
        return self.output.name or "run"

    def without_checkpoint(self) -> Config:
        """This config trained from scratch: no `model.pretrained`, nor the
        `pretrained_layers` that `auto` gave it (a run that cannot use the checkpoint)."""
        return dataclasses.replace(
            self, model=dataclasses.replace(self.model, pretrained=None, pretrained_layers=None)
        )


# By each section's own name, in the order of `Config` (and of YAML dumps and docs).
SECTIONS: dict[str, type[Section]] = {
    cls.section: cls
    for cls in (
        DatasetConfig,
        TextConfig,
        ModelConfig,
        TrainingConfig,
        OutputConfig,
        PretrainingConfig,
    )
}
