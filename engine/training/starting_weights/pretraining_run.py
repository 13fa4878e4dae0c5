"""A pretrain.py run as a starting point (`model.init_from`): read, checked against the
config, and its encoder's weights loaded into a classifier."""

import dataclasses
import json
from pathlib import Path

from config import (
    ENCODER_FIELDS,
    Config,
    ConfigError,
    ReplacedKeyError,
    earlier_version_message,
)
from config.files import load_config
from run_folder import runs

# models and the masked language model load TensorFlow: only `start_from_encoder` needs
# them, so reading and checking a pretraining run needs no TensorFlow.


@dataclasses.dataclass
class PretrainingRun:
    """A finished pretrain.py run: its folder, resolved config and token vocabulary."""

    run_dir: Path
    config: Config
    vocabulary: list[str]

    @property
    def encoder_weights(self) -> Path:
        return self.run_dir / runs.ENCODER_WEIGHTS


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
        what = (
            "no such folder"
            if not run_dir.is_dir()
            else f"no {', '.join(missing)}: not a finished pretrain.py run"
        )
        raise ConfigError(f"model.init_from: {run_dir}: {what}; run pretrain.py first")
    try:
        config = load_config(run_dir / runs.CONFIG_FILE)
        tokens = json.loads((run_dir / runs.VOCABULARY_FILE).read_text())
        vocabulary = [str(token) for token in tokens]
    except ReplacedKeyError as error:
        raise ConfigError(
            "model.init_from: "
            + earlier_version_message(run_dir / runs.CONFIG_FILE, run_dir, str(error))
        ) from None
    except (ConfigError, OSError, ValueError) as error:
        raise ConfigError(f"model.init_from: {run_dir}: unreadable ({error})") from None
    return PretrainingRun(run_dir, config, vocabulary)


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
    from engine.training.masked_language_model import (
        build_masked_language_model,
        copy_encoder_weights,
    )
    from models.upgrade import is_old_encoder_file

    weights = pretrained.encoder_weights
    if is_old_encoder_file(weights):
        raise ConfigError(
            "model.init_from: " + earlier_version_message(weights, pretrained.run_dir)
        )
    text, model = pretrained.config.text, pretrained.config.model
    encoder = build_masked_language_model(
        model, len(pretrained.vocabulary) + 1, text.sequence_length
    )
    try:
        encoder.load_weights(weights)
    except (OSError, ValueError) as error:
        raise ConfigError(
            f"model.init_from: {weights} does not fit the encoder of its "
            f"config.yaml ({str(error).splitlines()[0]}); pretrain it again "
            "with pretrain.py"
        ) from None
    copy_encoder_weights(encoder, classifier)
    print(f"model.init_from: the encoder starts from {pretrained.run_dir}")
