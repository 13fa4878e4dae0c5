"""How the encoder trains: one recipe, chosen once from `model.fine_tune`.

Each kind is one class that carries what differs between them: the checks it needs, how
it prepares the classifier and builds its trainer, the batches and callbacks it needs, and
what it leaves in the run folder when training ends. `train.py` names the recipe once
and never branches on the kind (PEFT's one config per adapter method):

- `FullFineTune` (kind full, and every run from scratch): every weight trains.
- `TopBlocks` (top_blocks, head): only the top K blocks and the head train; the
  embedding and the blocks below run once per text (`data.LowerStates`), their states
  kept for every epoch and validation.
- `Lora` (lora): the encoder stays as loaded, low-rank factors on its attention train
  (`models.lora`); the run folder gets the adapter file beside `model.keras`.

Example:
>>> from config import ModelConfig
>>> type(fit_recipe(ModelConfig(pretrained="x", fine_tune={"kind": "head"}))).__name__
'TopBlocks'
"""

import shutil
from pathlib import Path

from config import ConfigError, FineTuneConfig, ModelConfig
from engine.training.fitting import epoch_steps
from run_folder import runs

# TensorFlow and the modules built on it (data's pipelines, models, the trainer) are imported
# by the methods that use them: choosing and checking a recipe needs only the config.


class FullFineTune:
    """Every weight trains: the recipe of a run from scratch and of `fine_tune: full`."""

    # Which of config.AUTO_TRAINING's columns `training: auto` fields take.
    lora = False
    # Where the trained blocks start when those below are frozen (`prepare` sets it).
    start_block = None

    def __init__(self, fine_tune: FineTuneConfig):
        self.fine_tune = fine_tune

    def check(self, num_blocks: int, streaming: bool, distributed: bool) -> None:
        """ConfigErrors for what this recipe cannot follow (an encoder of `num_blocks`
        blocks, streamed data, several processes or replicas), before any model work."""

    def prepare(self, classifier) -> None:
        """Freezes or adapts the classifier's weights as the recipe trains them."""

    def build_trainer(self, classifier, training, steps_per_epoch):
        """The compiled model that trains `classifier` (`trainer.build_trainer`)."""
        from engine.training.trainer import build_trainer

        return build_trainer(classifier, training, steps_per_epoch, self.start_block)

    def pipelines(self, config, data, classifier, pipelines: dict, run_dir: Path) -> dict:
        """The batches `fit` reads: {train, validation} of (inputs, one-hot label)."""
        return pipelines

    def callbacks(self, classifier, run_dir: Path) -> list:
        """Callbacks beside `fitting.make_callbacks`' own."""
        return []

    def finish(self, classifier, run_dir: Path) -> None:
        """Writes what the recipe adds to the run folder, and removes its scratch files."""


class TopBlocks(FullFineTune):
    """The top `blocks` blocks and the head train (0 for kind head); the states below them
    are computed once per text."""

    @property
    def trained_blocks(self) -> int:
        return self.fine_tune.blocks if self.fine_tune.kind == "top_blocks" else 0

    def check(self, num_blocks, streaming, distributed):
        if self.trained_blocks > num_blocks:
            raise ConfigError(
                f"model.fine_tune.blocks: {self.trained_blocks} is more than the "
                f"encoder's {num_blocks} blocks; set it to at most that, or "
                "fine_tune to full"
            )
        if streaming or distributed:
            raise ConfigError(
                f"model.fine_tune: {self.fine_tune.kind} computes the frozen blocks once, which "
                "needs the data in memory and one process; set dataset.streaming: false and "
                "training.distribution: none, or model.fine_tune to full"
            )

    def prepare(self, classifier):
        from engine.training.trainer import freeze_lower_blocks

        self.start_block = freeze_lower_blocks(classifier, self.trained_blocks)

    def pipelines(self, config, data, classifier, pipelines, run_dir):
        """((token ids, the frozen blocks' states), one-hot label) batches: the states
        computed as the first epoch reads them, kept in memory or, past
        `training.states_memory_mb`, in the run folder."""
        import tensorflow as tf

        from data import LowerStates, make_pipelines, one_hot_labels

        compute = tf.function(
            lambda token_ids: classifier.encoder.lower_states(token_ids, self.start_block),
            reduce_retracing=True,
        )
        states = make_pipelines(
            data.splits,
            data.vectorizer,
            config.training.batch_size,
            seed=config.training.seed,
            pad_to_cap=not config.model.mask_zero,
            lower_states=LowerStates(
                compute, run_dir / runs.STATES_DIR, config.training.states_memory_mb
            ),
            positions=config.training.dynamics,
        )
        states = one_hot_labels(
            {split: states[split] for split in ("train", "validation")}, len(data.class_names)
        )
        epoch_steps(states, config.training)  # A capped epoch: the train split repeats.
        return states

    def finish(self, classifier, run_dir):
        shutil.rmtree(run_dir / runs.STATES_DIR, ignore_errors=True)


class Lora(FullFineTune):
    """LoRA factors of `rank` on the `targets` projections train, and the head."""

    lora = True

    def prepare(self, classifier):
        from models.lora import enable_lora, starting_kernels

        enable_lora(classifier, self.fine_tune.rank, self.fine_tune.targets)
        # What the adapter file measures the training's change from (a resumed run
        # reloads the checkpoint too, so these are the same kernels).
        self.start = starting_kernels(classifier, self.fine_tune.targets)

    def callbacks(self, classifier, run_dir):
        from models.lora import LoraBackup

        return [LoraBackup(run_dir / runs.BACKUP_DIR / "lora_factors.npz", classifier, self.start)]

    def finish(self, classifier, run_dir):
        from models.lora import save_adapter

        with runs.staged_file(run_dir / runs.ADAPTER_FILE) as temporary:
            save_adapter(classifier, self.start, self.fine_tune.rank, temporary)


RECIPES = {"full": FullFineTune, "top_blocks": TopBlocks, "head": TopBlocks, "lora": Lora}


def fit_recipe(model: ModelConfig) -> FullFineTune:
    """The recipe of `model.fine_tune`."""
    return RECIPES[model.fine_tune.kind](model.fine_tune)
