"""The run folder: its file names and writes that are never half done (a finished run is
loaded by `run_folder.saved_run`).

A run folder, `<output.root>/<output.name>/`, holds:

    config.yaml        the resolved config (load_config reads it back)
    model.keras        raw strings in, class probabilities out (safe-mode loadable)
    labels.json        the class names, in the model's output order
    history.csv        one row per finished epoch, counted from 1 (CSVLogger)
    dynamics.parquet   each training example's probability, margin and correctness per
                       epoch (training.dynamics; engine/training/dynamics.py); for label
                       sets per (example, label), the label's index in DYNAMICS_LABEL
    metrics.json       validation and test metrics, epochs, best epoch, wall time
    checkpoints/       the best epoch's weights, while training (output.keep_checkpoints)
    logs/              TensorBoard logs (attention images in logs/attention/)
    eval/<data>/       evaluate.py's reports
    attention/         the attention export (docs/attention_format.md) and its viewer

Training writes into `<name>.partial/` and renames it when every file is there; reports and
exports are written into `<folder>.partial/` and replace the previous folder as a whole
(`staged_folder`). Every other module takes these names from here.

Example:
>>> run_files(Path("runs/default"))["model"]
PosixPath('runs/default/model.keras')
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from config import Config, ConfigError
from config.files import dump_config

# `models` and `data` load TensorFlow, which takes seconds: they are imported inside the
# functions that need them, so that commands report a bad argument before that wait.

CONFIG_FILE = "config.yaml"
MODEL_FILE = "model.keras"
ADAPTER_FILE = "adapter.weights.h5"  # a LoRA run's factors and head (models/lora.py)
LABELS_FILE = "labels.json"
THRESHOLDS_FILE = "thresholds.json"  # a multi-label run's threshold per label (label_sets)
HISTORY_FILE = "history.csv"
DYNAMICS_FILE = "dynamics.parquet"
DYNAMICS_LABEL = "label"  # the column of dynamics.parquet naming a label set's label index
METRICS_FILE = "metrics.json"
BEST_WEIGHTS = "checkpoints/best.weights.h5"
BACKUP_DIR = "backup"
STATES_DIR = "states"  # frozen blocks' states past training.states_memory_mb, while training
LOGS_DIR = "logs"
ATTENTION_LOGS_DIR = "logs/attention"
EVAL_DIR = "eval"
PREDICTIONS_FILE = "predictions.csv"  # eval/<split>/'s every prediction (engine/reports.py)
HEADS_SPLIT = "validation"  # whose heads.json orders pruning and the viewer shows first
# eval/<split>/faithfulness.json: `evaluate.py --faithfulness`'s measurement of every
# attribution method (inspection/methods/faithfulness.py); its best method is predict's default.
FAITHFULNESS_FILE = "faithfulness.json"
COMPRESS_FILE = "compress.json"  # a pruned run's: the heads removed and those kept
ATTENTION_DIR = "attention"  # attention/<split, data or texts file stem>/: one per export
VIEWER_EXAMPLES = 32  # an export's first examples in its index.html (--viewer-examples)
HEATMAP_EXAMPLES = 8  # and with heatmaps and BertViz files (--heatmaps)
PARTIAL_SUFFIX = ".partial"
# A pretraining run (pretrain.py) has these two instead of model.keras and labels.json:
ENCODER_WEIGHTS = "encoder.weights.h5"  # the masked language model's weights
VOCABULARY_FILE = "vocabulary.json"  # the vectoriser's tokens in id order


class RunError(ValueError):
    """A missing, unfinished or unreadable run folder or model; the message is one line."""


def run_files(run_dir: Path) -> dict[str, Path]:
    """The paths a finished run shows its user, by role."""
    return {
        "run folder": run_dir, "model": run_dir / MODEL_FILE,
        "metrics": run_dir / METRICS_FILE, "history": run_dir / HISTORY_FILE,
        "logs": run_dir / LOGS_DIR,
    }  # fmt: skip


@contextlib.contextmanager
def staged_file(path: Path):
    """Yields a temporary path next to `path`; on success it replaces `path` in one step.

    A crash never leaves half a file at `path`; on an error the temporary file is removed.
    """
    temporary = path.with_name("tmp-" + path.name)
    try:
        yield temporary
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, path)


def write_text(path: Path, text: str) -> None:
    with staged_file(path) as temporary:
        temporary.write_text(text)


def write_json(path: Path, data) -> None:
    write_text(path, json.dumps(data, indent=2) + "\n")


def read_history(run_dir: Path) -> list[dict]:
    """The rows of `history.csv` (strings, as CSVLogger wrote them); [] before epoch 1."""
    path = run_dir / HISTORY_FILE
    if not path.exists():
        return []
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


def partial_dir(final_dir: Path) -> Path:
    return final_dir.with_name(final_dir.name + PARTIAL_SUFFIX)


def replace_folder(source: Path, final_dir: Path) -> None:
    """Moves `source` to `final_dir`; an existing `final_dir` is replaced, never merged."""
    if final_dir.exists():
        old = final_dir.with_name(final_dir.name + ".old")
        if old.exists():
            shutil.rmtree(old)
        os.replace(final_dir, old)
        os.replace(source, final_dir)
        shutil.rmtree(old)
    else:
        os.replace(source, final_dir)


@contextlib.contextmanager
def staged_folder(final_dir: Path):
    """Yields an empty `<final_dir>.partial/`; on success it replaces `final_dir` whole.

    On an error the staging folder is removed and `final_dir` is left as it was.
    """
    staging = partial_dir(final_dir)
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    replace_folder(staging, final_dir)


def prepare_run_dir(
    config: Config, overwrite: bool, worker: int | None = None
) -> tuple[Path, Path, bool]:
    """(final folder, partial folder to train in, resumed?) after checking what is there.

    `worker`: the task id of a multi-worker run's worker that is not the chief. Its files
    are scratch: it trains in `.<name>.worker-<id>.partial/`, hidden next to the chief's
    folder (kept across an interruption, for BackupAndRestore), which train.py removes
    at the end; the final folder it is given is the chief's.

    Raises:
        ConfigError: the final folder holds a finished run and `overwrite` is False, or
            the partial folder holds an interrupted run of a different config.
    """
    final_dir = Path(config.output.root) / config.run_name()
    staging = partial_dir(final_dir)
    resolved = dump_config(config)
    if final_dir.exists() and not overwrite:
        raise ConfigError(
            f"output.name: {final_dir} already holds a finished run; pass --overwrite to "
            "replace it or choose another name with --set output.name=NAME"
        )
    if worker is not None:
        staging = final_dir.with_name(f".{final_dir.name}.worker-{worker}{PARTIAL_SUFFIX}")
        if overwrite and staging.exists():
            shutil.rmtree(staging)
        resumed = staging.exists()
        with _writing(staging):
            staging.mkdir(parents=True, exist_ok=True)
        return final_dir, staging, resumed
    resumed = False
    if staging.exists():
        saved = staging / CONFIG_FILE
        if overwrite:
            shutil.rmtree(staging)
        elif saved.exists() and saved.read_text() == resolved:
            resumed = True
        else:
            raise ConfigError(
                f"output.name: {staging} holds an interrupted run with a different config; "
                "run its original command to resume it, or pass --overwrite to start over"
            )
    with _writing(staging):
        staging.mkdir(parents=True, exist_ok=True)
        write_text(staging / CONFIG_FILE, resolved)
    return final_dir, staging, resumed


@contextlib.contextmanager
def _writing(folder: Path):
    try:
        yield
    except OSError as error:  # a file in the way, a read-only or full disk
        raise ConfigError(
            f"output.root: cannot write the run folder {folder} ({error.strerror or error}); "
            "choose a writable folder with --set output.root=DIR"
        ) from None


def check_writable(config: Config) -> None:
    """Raises a one-line ConfigError, before any data or model work, when the run folder
    of `config` could not be written (a file in the way, a read-only or full disk)."""
    root = Path(config.output.root)
    if root.exists() and not root.is_dir():
        raise ConfigError(
            f"output.root: {root} is a file, not a folder; choose a folder with "
            "--set output.root=DIR"
        )
    with _writing(partial_dir(root / config.run_name())):
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".write-check-"):
            pass


@contextlib.contextmanager
def cleaned_up_unless_started(run_dir: Path):
    """On an error, removes the partial run folder `run_dir` if no epoch finished in it:
    there is nothing to resume. With a finished epoch it stays, for the same command to
    resume (`resumable`)."""
    try:
        yield
    except BaseException:
        if not read_history(run_dir):
            shutil.rmtree(run_dir, ignore_errors=True)
        raise


def resumable(config: Config) -> Path | None:
    """The partial folder of `config`'s run when it holds finished epochs, else None."""
    staging = partial_dir(Path(config.output.root) / config.run_name())
    return staging if read_history(staging) else None


def write_thresholds(run_dir, class_names, thresholds) -> None:
    write_json(
        Path(run_dir) / THRESHOLDS_FILE,
        {name: float(value) for name, value in zip(class_names, thresholds, strict=True)},
    )


def read_thresholds(run_dir, class_names) -> np.ndarray:
    """A multi-label run's thresholds (`engine.label_sets`) in class order.

    Raises:
        RunError: the file is missing or does not name every class.
    """
    path = Path(run_dir) / THRESHOLDS_FILE
    try:
        values = json.loads(path.read_text())
        return np.array([float(values[name]) for name in class_names])
    except (OSError, ValueError, KeyError) as error:
        raise RunError(
            f"{path}: cannot read the multi-label run's thresholds ({error}); retrain the run"
        ) from None
