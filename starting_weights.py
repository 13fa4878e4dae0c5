"""Where a run's starting weights come from: the one owner, called by train.py.

It sits above `models/` (which takes paths and plain values) and `runs` (the pretraining
run's folder) and `data` (word vectors) and puts them together.

Three sources, at most one a run (the config checks that):
- `model.pretrained`: a BERT-family checkpoint (`models.checkpoints`); it also brings the
  tokenizer (WordPiece) and the encoder's architecture;
- `model.init_from`: a pretrain.py run folder; it brings its vocabulary and text settings;
- `model.pretrained_embeddings`: word vectors for the token embeddings (`data.word_vectors`).
Everything else starts as initialised.
"""

import dataclasses
import json
from pathlib import Path

import runs
from config import Config, ConfigError, ReplacedKeyError, earlier_version_message
from config_files import load_config


@dataclasses.dataclass
class PretrainingRun:
    """A finished pretrain.py run: its folder, resolved config and token vocabulary."""

    run_dir: Path
    config: Config
    vocabulary: list[str]

    @property
    def encoder_weights(self) -> Path:
        return self.run_dir / runs.ENCODER_WEIGHTS


@dataclasses.dataclass
class StartingWeights:
    """What a config's starting weights need before the data and the model exist.

    `config` is the run's config as these sources resolve it (a pretraining run's text
    section); `tokenizer` (a checkpoint's, uncapped) or `vocabulary` (a pretraining run's)
    turn the texts into ids; `checkpoint` shapes the classifier (`build_classifier`).
    """

    config: Config
    checkpoint: object = None  # models.checkpoints.Checkpoint
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
    if model.pretrained:
        from models.checkpoints import checkpoint_folder, read_checkpoint

        checkpoint = read_checkpoint(checkpoint_folder(model.pretrained, config.dataset.data_dir))
        check_checkpoint_fits(config, checkpoint)
        return StartingWeights(config, checkpoint=checkpoint)
    if model.init_from:
        run = load_pretraining_run(model.init_from)
        return StartingWeights(with_pretrained_text(config, run), pretraining_run=run)
    return StartingWeights(config)


def check_checkpoint_fits(config: Config, checkpoint) -> None:
    """The text and model settings a checkpoint cannot follow are ConfigErrors."""
    cap, layers = config.text.sequence_length, config.model.pretrained_layers
    if cap != "auto" and cap > checkpoint.max_positions:
        raise ConfigError(f"text.sequence_length: {cap} is more than the checkpoint's "
                          f"{checkpoint.max_positions} positions; set it to at most that")
    if layers is not None and layers > checkpoint.num_layers:
        raise ConfigError(f"model.pretrained_layers: {layers} is more than the checkpoint's "
                          f"{checkpoint.num_layers} blocks; set it to at most that, or null")
    if config.text.stop_words != "none":
        raise ConfigError("text.stop_words: a pretrained encoder reads the text as its "
                          "tokenizer makes it; set text.stop_words to none")


def load_checkpoint_into(classifier, checkpoint) -> None:
    """The checkpoint's weights into the classifier's embedding and blocks."""
    from models.checkpoints import load_checkpoint_weights

    skipped = load_checkpoint_weights(classifier.encoder, checkpoint)
    blocks = classifier.encoder.blocks
    kept = f"its first {len(blocks)} of {len(blocks) + skipped} blocks" if skipped else (
        f"all {len(blocks)} blocks")
    print(f"model.pretrained: the encoder starts from {checkpoint.folder} ({kept})")


def load_pretraining_run(run_dir: str | Path) -> PretrainingRun:
    """A finished pretrain.py run (for `model.init_from`).

    Raises:
        ConfigError: one line naming `model.init_from`: the folder is missing, unfinished
            or not a pretraining run.
    """
    run_dir = Path(run_dir)
    files = (runs.CONFIG_FILE, runs.ENCODER_WEIGHTS, runs.VOCABULARY_FILE)
    needed = [run_dir / name for name in files]
    missing = [path.name for path in needed if not path.is_file()]
    if missing:
        what = ("no such folder" if not run_dir.is_dir()
                else f"no {', '.join(missing)}: not a finished pretrain.py run")
        raise ConfigError(f"model.init_from: {run_dir}: {what}; run pretrain.py first")
    try:
        config = load_config(run_dir / runs.CONFIG_FILE)
    except ReplacedKeyError as error:
        raise ConfigError("model.init_from: " + earlier_version_message(
            run_dir / runs.CONFIG_FILE, run_dir, str(error))) from None
    try:
        config = load_config(run_dir / runs.CONFIG_FILE)
        tokens = json.loads((run_dir / runs.VOCABULARY_FILE).read_text())
        vocabulary = [str(token) for token in tokens]
    except (ConfigError, OSError, ValueError) as error:
        raise ConfigError(f"model.init_from: {run_dir}: unreadable ({error})") from None
    return PretrainingRun(run_dir, config, vocabulary)


# The model fields that shape the encoder: a pretrained one fits only the same values.
ENCODER_FIELDS = ("d_model", "num_heads", "key_dim", "num_layers", "intermediate_dim",
                  "activation", "positional_encoding", "mask_zero", "norm_first",
                  "layer_norm_epsilon")


def with_pretrained_text(config: Config, pretrained: PretrainingRun) -> Config:
    """`config` with the pretraining run's text section (its vocabulary, standardisation
    and cap), after checking that the encoder fields match.

    Raises:
        ConfigError: an encoder field differs from the pretrained encoder's.
    """
    for name in ENCODER_FIELDS:
        ours, theirs = getattr(config.model, name), getattr(pretrained.config.model, name)
        if ours != theirs:
            raise ConfigError(
                f"model.{name}: {ours!r} does not fit the pretrained encoder in "
                f"{pretrained.run_dir} ({theirs!r}); set model.{name}={theirs} or pretrain again"
            )
    if config.text != pretrained.config.text:
        print(f"model.init_from: text settings and vocabulary from {pretrained.run_dir}")
    return dataclasses.replace(config, text=pretrained.config.text)


def start_from_encoder(classifier, pretrained: PretrainingRun) -> None:
    """Loads the pretrained encoder's weights into `classifier`'s embedding and blocks (its
    class token and head stay as initialised)."""
    from models.masked_language_model import build_masked_language_model, copy_encoder_weights
    from models.upgrade import is_old_encoder_file

    weights = pretrained.encoder_weights
    if is_old_encoder_file(weights):
        raise ConfigError("model.init_from: " + earlier_version_message(weights,
                                                                         pretrained.run_dir))
    text, model = pretrained.config.text, pretrained.config.model
    encoder = build_masked_language_model(model, len(pretrained.vocabulary) + 1,
                                          text.sequence_length)
    try:
        encoder.load_weights(weights)
    except (OSError, ValueError) as error:
        raise ConfigError(f"model.init_from: {weights} does not fit the encoder of its "
                          f"config.yaml ({str(error).splitlines()[0]}); pretrain it again "
                          "with pretrain.py") from None
    copy_encoder_weights(encoder, classifier)
    print(f"model.init_from: the encoder starts from {pretrained.run_dir}")


def load_token_vectors(classifier, config: Config, vocabulary, seed=0):
    """Starts the token embeddings from `model.pretrained_embeddings`."""
    from data.word_vectors import embedding_matrix, load_word_vectors
    from models import token_embeddings

    name = config.model.pretrained_embeddings
    words, vectors = load_word_vectors(name, config.dataset.data_dir)
    matrix, found = embedding_matrix(vocabulary, words, vectors, config.model.d_model, seed=seed)
    token_embeddings(classifier).assign(matrix)
    print(f"model.pretrained_embeddings: {name} has vectors for {found:,} of the "
          f"{len(vocabulary):,} vocabulary words")


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
        raise ConfigError(f"{run_dir}: no {runs.ADAPTER_FILE}; only a run with "
                          "model.fine_tune: lora has one")
    weights = starting_weights(load_config(run_dir / runs.CONFIG_FILE))
    config = weights.config
    vocabulary = weights.vocabulary or weights.checkpoint.vocabulary
    num_classes = len(json.loads((run_dir / runs.LABELS_FILE).read_text()))
    classifier = build_classifier(config.model, len(vocabulary) + weights.extra_token_ids,
                                  config.text.sequence_length, num_classes,
                                  checkpoint=weights.checkpoint)
    weights.load_into(classifier, vocabulary, seed=config.training.seed)
    load_adapter(classifier, adapter)
    return classifier
