"""Where a run's starting weights come from: the one owner, called by train.py. This
module holds the plan (`starting_weights`, `StartingWeights`); a module per source reads it.

It sits above `models/` (which takes paths and plain values), `runs` (the pretraining
run's folder) and `data`, and puts them together.

Three sources, at most one a run (the config checks that):
- `model.pretrained`: a BERT-family checkpoint (`checkpoints`, its tensors converted onto
  our layers by `checkpoint_weights`); it also brings the tokenizer (WordPiece) and the
  encoder's architecture (`pretrained_encoder` makes one a Keras model of its own);
- `model.init_from`: a pretrain.py run folder (`pretraining_run`); it brings its vocabulary
  and text settings;
- `model.pretrained_embeddings`: word vectors for the token embeddings (`word_vectors`).
Everything else starts as initialised.
"""

import dataclasses
import json
from pathlib import Path

from config import Config, ConfigError
from config.files import load_config
from engine.training.starting_weights.checkpoint_weights import load_checkpoint_weights
from engine.training.starting_weights.checkpoints import checkpoint_folder, read_checkpoint
from engine.training.starting_weights.pretraining_run import (
    PretrainingRun,
    load_pretraining_run,
    start_from_encoder,
    with_pretrained_text,
)
from engine.training.starting_weights.word_vectors import embedding_matrix, load_word_vectors
from run_folder import runs
from tokenization.pairs import separator_id

# models loads TensorFlow: the functions that build or fill a model import it, so that
# planning the starting weights (reading a checkpoint's or a run's files) needs no TensorFlow.


@dataclasses.dataclass
class StartingWeights:
    """What a config's starting weights need before the data and the model exist.

    `config` is the run's config as these sources resolve it (a pretraining run's text
    section); `tokenizer` (a checkpoint's, uncapped) or `vocabulary` (a pretraining run's)
    turn the texts into ids; `checkpoint` shapes the classifier (`build_classifier`).
    """

    config: Config
    checkpoint: object = None  # starting_weights.checkpoints.Checkpoint
    pretraining_run: PretrainingRun | None = None

    @property
    def tokenizer(self):
        return self.checkpoint.tokenizer() if self.checkpoint else None

    @property
    def vocabulary(self):
        return self.pretraining_run.vocabulary if self.pretraining_run else None

    @property
    def num_blocks(self) -> int:
        """How many blocks the classifier's encoder has."""
        model = self.config.model
        if self.checkpoint:
            return model.pretrained_layers or self.checkpoint.num_layers
        return model.num_layers

    @property
    def extra_token_ids(self) -> int:
        """Rows the token table has beyond the vocabulary: a pretraining run's mask token."""
        return 1 if self.pretraining_run else 0

    def separator_id(self, vocabulary) -> int | None:
        """The token id between a text pair's sides (`tokenization.pairs`): the
        checkpoint's `[SEP]` or our vectorizer's pair mark; None for single texts."""
        return separator_id(vocabulary) if self.config.dataset.is_pair else None

    def load_into(self, classifier, vocabulary, seed=0):
        """Sets the classifier's starting weights (a resumed run's backup replaces them
        with the trained ones afterwards)."""
        model = self.config.model
        if self.checkpoint:
            load_checkpoint_into(classifier, self.checkpoint)
        if self.pretraining_run:
            start_from_encoder(classifier, self.pretraining_run)
        if model.pretrained_embeddings:
            load_token_vectors(classifier, self.config, vocabulary, seed)


def starting_weights(config: Config) -> StartingWeights:
    """Resolves the config's starting weights: reads the checkpoint or pretraining run.

    Raises:
        ConfigError: a setting does not fit the pretrained encoder.
        DataError: the checkpoint cannot be fetched or read.
    """
    model = config.model
    if model.pretrained == "auto":  # A ModelConfig built in code: load_config resolves it.
        raise ConfigError(
            "model.pretrained: auto is resolved by config.files.load_config, "
            "from what the config names; set a checkpoint or null"
        )
    if model.pretrained:
        checkpoint = read_checkpoint(checkpoint_folder(model.pretrained, config.dataset.data_dir))
        check_checkpoint_fits(config, checkpoint)
        return StartingWeights(config, checkpoint=checkpoint)
    if model.init_from:
        if config.dataset.is_pair:
            raise ConfigError(
                "model.init_from: text pairs start from a checkpoint (model.pretrained) or "
                "from scratch, not from a pretraining run's vocabulary; set it to null"
            )
        run = load_pretraining_run(model.init_from)
        return StartingWeights(with_pretrained_text(config, run), pretraining_run=run)
    return StartingWeights(config)


def check_checkpoint_fits(config: Config, checkpoint) -> None:
    """The text and model settings a checkpoint cannot follow are ConfigErrors."""
    cap, layers = config.text.sequence_length, config.model.pretrained_layers
    if cap != "auto" and cap > checkpoint.max_positions:
        raise ConfigError(
            f"text.sequence_length: {cap} is more than the checkpoint's "
            f"{checkpoint.max_positions} positions; set it to at most that"
        )
    if layers is not None and layers > checkpoint.num_layers:
        raise ConfigError(
            f"model.pretrained_layers: {layers} is more than the checkpoint's "
            f"{checkpoint.num_layers} blocks; set it to at most that, or null"
        )
    if config.text.stop_words != "none":
        raise ConfigError(
            "text.stop_words: a pretrained encoder reads the text as its "
            "tokenizer makes it; set text.stop_words to none"
        )


def load_checkpoint_into(classifier, checkpoint) -> None:
    """The checkpoint's weights into the classifier's embedding and blocks."""
    skipped = load_checkpoint_weights(classifier.encoder, checkpoint)
    blocks = classifier.encoder.blocks
    kept = (
        f"its first {len(blocks)} of {len(blocks) + skipped} blocks"
        if skipped
        else (f"all {len(blocks)} blocks")
    )
    print(f"model.pretrained: the encoder starts from {checkpoint.folder} ({kept})")


def load_token_vectors(classifier, config: Config, vocabulary, seed=0):
    """Starts the token embeddings from `model.pretrained_embeddings`."""
    from models import token_embeddings

    name = config.model.pretrained_embeddings
    words, vectors = load_word_vectors(name, config.dataset.data_dir)
    matrix, found = embedding_matrix(vocabulary, words, vectors, config.model.d_model, seed=seed)
    token_embeddings(classifier).assign(matrix)
    print(
        f"model.pretrained_embeddings: {name} has vectors for {found:,} of the "
        f"{len(vocabulary):,} vocabulary words"
    )


def classifier_from_adapter(run_dir: str | Path):
    """A LoRA run's classifier (model.fine_tune: lora) rebuilt from what it started from (its
    checkpoint, or pretraining run) and its `adapter.weights.h5`: it predicts what the
    run's `model.keras` predicts. The adapter's few hundred kB ride on the shared checkpoint.

    Raises:
        ConfigError: the run folder has no adapter (not a LoRA run).
    """
    from models import build_classifier
    from models.lora import load_adapter

    run_dir = Path(run_dir)
    adapter = run_dir / runs.ADAPTER_FILE
    if not adapter.exists():
        raise ConfigError(
            f"{run_dir}: no {runs.ADAPTER_FILE}; only a run with model.fine_tune: lora has one"
        )
    weights = starting_weights(load_config(run_dir / runs.CONFIG_FILE))
    config = weights.config
    vocabulary = weights.vocabulary or weights.checkpoint.vocabulary
    num_classes = len(json.loads((run_dir / runs.LABELS_FILE).read_text()))
    classifier = build_classifier(
        config.model,
        len(vocabulary) + weights.extra_token_ids,
        config.text.sequence_length,
        num_classes,
        checkpoint=weights.checkpoint,
        separator_id=weights.separator_id(vocabulary),
        multi_label=config.dataset.is_multi_label,
    )
    weights.load_into(classifier, vocabulary, seed=config.training.seed)
    load_adapter(classifier, adapter)
    return classifier
