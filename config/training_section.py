"""The training section of the config schema: how the classifier is fitted (`training`),
and what its `auto` fields resolve to.

Part of the one schema: `config/schema.py` assembles it with the other sections and exports it;
import it from there. Every field has a default and a comment; the section checks itself
when it is built.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from config.typed import NOT_NEGATIVE, POSITIVE, RATE, ConfigError, Section, option


def _auto_or(check, what):
    return (
        lambda value: value == "auto" if isinstance(value, str) else check(value),
        f"must be {what} or auto",
    )


# What `auto` means in the training section: the from-scratch values won on the built-in
# datasets' recipes; a checkpoint's were chosen on validation: 2 epochs matched 3 on the
# reviews file of bench/bench_own_file.py (every file's best epoch was 1 or 2 of 2) in 57%
# of the time, which keeps a 5k-text file within 5 minutes on 2 cores (docs/training.md).
AUTO_TRAINING = {
    "scratch": {"learning_rate": 2e-3, "epochs": 10, "early_stopping_patience": 3},
    "pretrained": {"learning_rate": 1e-4, "epochs": 2, "early_stopping_patience": 2},
    # model.fine_tune: lora: only the low-rank factors and the head train; chosen on Rotten
    # Tomatoes' validation split among 1e-4, 1e-3 and 3e-3 (docs/pretrained.md, "LoRA").
    "lora": {"learning_rate": 3e-3, "epochs": 3, "early_stopping_patience": 2},
}


@dataclass(frozen=True)
class TrainingConfig(Section):
    section: ClassVar[str] = "training"
    # Global batch size (split across replicas under a distribution strategy).
    batch_size: int = option(32, POSITIVE)
    # Maximum epochs; early stopping usually ends the run sooner. auto: 10 from scratch, 2
    # when fine-tuning a model.pretrained checkpoint (docs/training.md, "Defaults").
    epochs: int | str = option("auto", _auto_or(lambda v: v > 0, "a positive integer"))
    # Cap on batches per epoch (null: the whole training split). Small values make CI
    # configs train in seconds.
    steps_per_epoch: int | None = option(None, POSITIVE)
    # adamw, sparse_adamw (AdamW that updates only the embedding rows a batch looked up,
    # as LazyAdam does: a large vocabulary costs little per step), adam or sgd (with
    # momentum 0.9).
    optimizer: str = option("adamw", choices=("adamw", "sparse_adamw", "adam", "sgd"))
    # Peak learning rate, reached after warmup. auto: 2e-3 from scratch, 1e-4 when
    # fine-tuning a model.pretrained checkpoint, 3e-3 with model.fine_tune: lora (saved as a
    # number in the run's config.yaml).
    learning_rate: float | str = option("auto", _auto_or(lambda v: v > 0, "a positive number"))
    # Decoupled weight decay (adamw and sparse_adamw only).
    weight_decay: float = option(0.01, NOT_NEGATIVE)
    # Fraction of all training steps spent warming the learning rate up from 0.
    warmup_fraction: float = option(0.1, RATE)
    # After warmup: cosine (decay to 0 at the last epoch) or constant.
    schedule: str = option("cosine", choices=("cosine", "constant"))
    # Clip each gradient update to this global norm; null disables clipping.
    clipnorm: float | None = option(1.0, POSITIVE)
    # Label smoothing of the cross-entropy loss; 0.1 won on validation (R8, R52, 20NG).
    label_smoothing: float = option(0.1, RATE)
    # Stop after this many epochs without a better `monitor` value and restore the best
    # weights; 0 disables early stopping. auto: 3 from scratch, 2 with a checkpoint.
    early_stopping_patience: int | str = option(
        "auto", _auto_or(lambda v: v >= 0, "a non-negative integer")
    )
    # What picks the best epoch (checkpoint and early stopping): val_loss, or
    # val_accuracy where label smoothing makes the loss a poor guide to accuracy;
    # multi-label data (dataset.label_separator or label_columns): val_micro_f1, which
    # its val_accuracy default becomes.
    monitor: str = option("val_accuracy", choices=("val_loss", "val_accuracy", "val_micro_f1"))
    # Seeds weights, dropout and shuffling; with op determinism, two runs of the same
    # command give the same metrics on CPU.
    seed: int = 0
    # mixed_float16 compute (float32 weights and softmax); useful on GPUs.
    mixed_precision: bool = False
    # XLA-compile the train step. Off by default: batches come in many lengths, and XLA
    # compiles the train and validation steps again for each new shape (6x slower per
    # epoch on 2 CPU cores, bench/bench_padding.py --xla). With XLA on, TensorFlow's op
    # determinism is off.
    jit_compile: bool = False
    # none (one device), mirrored (MirroredStrategy over local GPUs, or all logical CPUs
    # when there is no GPU) or multi_worker (MultiWorkerMirroredStrategy from TF_CONFIG).
    distribution: str = option("none", choices=("none", "mirrored", "multi_worker"))
    # Number of validation examples (the first N) whose attention heatmaps are written to
    # TensorBoard (logs/attention, Images tab) after every epoch; 0 turns them off.
    attention_images: int = option(0, NOT_NEGATIVE)
    # With model.fine_tune top_blocks or head, the frozen blocks' outputs stay in memory up to this
    # many MB per split; beyond, in files in the run folder (removed when it finishes).
    states_memory_mb: float = option(4096, POSITIVE)
    # Fit a temperature on the validation split after training and fold it into the saved
    # model, so its probabilities are calibrated (a temperature per label for label sets;
    # no prediction changes; docs/evaluation.md). false keeps the raw probabilities.
    calibrate: bool = True
    # Record every training example's probability of its label, margin and correctness at
    # each epoch, from the training step's own forward pass, into dynamics.parquet (for
    # `evaluate.py --suspects`). auto: on when the training split is in memory and one
    # process trains (docs/data_quality.md).
    dynamics: bool | str = option(
        "auto", (lambda v: v == "auto" or isinstance(v, bool), "must be auto, true or false")
    )

    def resolved(self, pretrained: bool = False, lora: bool = False) -> TrainingConfig:
        """This section with every auto field a number, for a run from scratch, one that
        fine-tunes a checkpoint, or one that adapts it with LoRA (`AUTO_TRAINING`); numbers
        stay as they are.

        Example:
        >>> TrainingConfig(epochs=5).resolved(pretrained=True).epochs
        5
        >>> auto = TrainingConfig().resolved(pretrained=True)
        >>> auto.learning_rate, auto.epochs, auto.early_stopping_patience
        (0.0001, 2, 2)
        """
        auto = AUTO_TRAINING["lora" if lora else "pretrained" if pretrained else "scratch"]
        return dataclasses.replace(
            self, **{name: value for name, value in auto.items() if getattr(self, name) == "auto"}
        )

    def check_together(self):
        if self.dynamics is True and self.distribution != "none":
            raise ConfigError(
                "training.dynamics: true records from one process; set "
                "training.distribution: none, or training.dynamics: false"
            )

    def records_dynamics(self, streaming: bool | None = None) -> bool:
        """Whether training records its dynamics (`dynamics: auto` resolved); with
        `streaming` unknown (None), whether it may.

        Example:
        >>> TrainingConfig().records_dynamics(streaming=True)
        False
        >>> TrainingConfig(dynamics=False).records_dynamics(), TrainingConfig().records_dynamics()
        (False, True)
        """
        if self.dynamics is True and streaming:
            raise ConfigError(
                "training.dynamics: true needs the training split in memory and "
                "it is streamed; set dataset.streaming: false, or "
                "training.dynamics: false"
            )
        return self.dynamics is not False and self.distribution == "none" and not streaming
