"""A finished run loaded from its folder: config, model (Keras' safe mode), class names,
its data splits rebuilt from the config; and why a folder is not a run to load.

The folder's file names are `run_folder.runs`'.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import numpy as np

from config import Config, ConfigError, ReplacedKeyError, earlier_version_message
from config.files import load_config
from data import DataError
from run_folder.runs import (
    CONFIG_FILE,
    DYNAMICS_FILE,
    LABELS_FILE,
    METRICS_FILE,
    MODEL_FILE,
    RunError,
    partial_dir,
    read_thresholds,
)

# `models` and `data`'s loaders load TensorFlow, which takes seconds: they are imported
# inside the functions that need them, so that commands report a bad argument before that
# wait (the `data` package itself and its `DataError` are light).


@dataclasses.dataclass
class Run:
    """A finished run: its folder, resolved config, end-to-end model and class names."""

    run_dir: Path
    config: Config
    model: object
    class_names: list[str]

    @property
    def pooling(self) -> str:
        return self.config.model.pooling

    @property
    def is_multi_label(self) -> bool:
        """Each text has a set of labels (sigmoid outputs, a threshold per label)."""
        return self.config.dataset.is_multi_label

    @functools.cached_property
    def thresholds(self):
        """A multi-label run's threshold per class (`engine.label_sets`), else None."""
        if not self.is_multi_label:
            return None
        return read_thresholds(self.run_dir, self.class_names)

    @functools.cached_property
    def temperature(self):
        """The temperature folded into the model (`engine.calibration`): a float, for label
        sets an array in class order; None for a run trained without calibrating."""
        try:
            metrics = json.loads((self.run_dir / METRICS_FILE).read_text())
            found = metrics["calibration"]["temperature"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if isinstance(found, dict):
            return np.array([float(found[name]) for name in self.class_names])
        return float(found)

    @property
    def is_pair(self) -> bool:
        """The run reads text pairs (`dataset.text_column: [first, second]`)."""
        return self.config.dataset.is_pair

    @functools.cached_property
    def parts(self):
        """(vectorizer, classifier) of the end-to-end model."""
        from models import get_model_parts

        try:
            return get_model_parts(self.model)
        except ValueError as error:
            raise RunError(f"{self.run_dir / MODEL_FILE}: {error}") from None

    def load_split(self, split: str):
        """(texts, labels) of the run's train, validation or test split, rebuilt from its
        config.

        Raises:
            DataError: the data cannot be loaded, or its classes differ from the run's.
        """
        return getattr(self._text_splits(), split)

    def load_columns(self, columns, split: str = "test", data_file=None):
        """(texts, {column: values}) of other columns of the rows `load_split(split)` gives,
        or of the labelled file `data_file` evaluate.py reads, in their order (`data.load_columns`).

        Raises:
            DataError: a file lacks a column, or the run's data is a TFDS dataset.
        """
        from data import load_columns

        return load_columns(self.config.dataset, columns, split, data_file)

    def pipelines(self):
        """{split: (token ids, one-hot label) batches} of the run's three splits, batched
        and shuffled as `train.py` made them, by its vectorizer (DataError: `load_split`'s)."""
        from data import make_pipelines, one_hot_labels

        training = self.config.training
        pipelines = make_pipelines(
            self._text_splits(),
            self.parts[0],
            training.batch_size,
            seed=training.seed,
            pad_to_cap=not self.config.model.mask_zero,
        )
        return one_hot_labels(pipelines, len(self.class_names))

    def _text_splits(self):
        from data import load_text_splits

        splits = load_text_splits(self.config.dataset)
        if list(splits.class_names) != self.class_names:
            raise DataError(
                f"{self.run_dir}: the dataset's classes no longer match the run's labels.json; "
                "evaluate with --data FILE instead"
            )
        return splits


def run_dir_problem(run_dir: str | Path) -> str | None:
    """Why `run_dir` is not a run folder at all (missing, a file, unfinished), or None.

    Example:
    >>> run_dir_problem("runs/nothere")
    'runs/nothere: no such run folder'
    """
    run_dir = Path(run_dir)
    if run_dir.is_dir():
        return None
    if run_dir.is_file():
        return (
            f"{run_dir} is a file, not a run folder: pass the folder that holds it, "
            f"{run_dir.parent}"
        )
    staging = partial_dir(run_dir)
    hint = (
        f"; {staging} is an unfinished run: rerun its train.py command to finish it"
        if staging.is_dir()
        else ""
    )
    return f"{run_dir}: no such run folder{hint}"


def dynamics_problem(run_dir: str | Path) -> str | None:
    """Why `run_dir` has no training dynamics to rank its labels by, or None.

    Example:
    >>> dynamics_problem("runs/nothere").split(":")[0]
    'runs/nothere has no dynamics.parquet'
    """
    if (Path(run_dir) / DYNAMICS_FILE).is_file():
        return None
    return (
        f"{run_dir} has no {DYNAMICS_FILE}: --suspects ranks labels by the training "
        "dynamics; train it again with --set training.dynamics=true (on by default when "
        "the training split is in memory)"
    )


def load_run(run_dir: str | Path) -> Run:
    """A finished run, its model loaded in Keras' safe mode.

    Raises:
        RunError: the folder, `model.keras`, `labels.json` or `config.yaml` is missing or
            unreadable, or the run is unfinished (the message says how to finish it).
    """
    run_dir = Path(run_dir)
    problem = run_dir_problem(run_dir)
    if problem:
        raise RunError(problem)
    model_path = run_dir / MODEL_FILE
    if not model_path.is_file():
        raise RunError(f"{model_path}: missing; is {run_dir} a finished train.py run?")
    labels_path = run_dir / LABELS_FILE
    try:
        class_names = [str(name) for name in json.loads(labels_path.read_text())]
    except (OSError, ValueError) as error:
        raise RunError(f"{labels_path}: cannot read the label names ({error})") from None
    try:
        config = load_config(run_dir / CONFIG_FILE)
    except ReplacedKeyError as error:
        raise RunError(earlier_version_message(run_dir / CONFIG_FILE, run_dir, error)) from None
    except ConfigError as error:
        raise RunError(f"{run_dir / CONFIG_FILE}: cannot read the run's config ({error})") from None
    from models import OutdatedFileError, load_end_to_end_model

    try:
        model = load_end_to_end_model(model_path)
    except OutdatedFileError as error:
        raise RunError(str(error)) from None
    except Exception as error:  # Corrupt zips, bad JSON and unknown classes raise many types.
        reason = (str(error).strip().splitlines() or [""])[0][:200]
        raise RunError(
            f"{model_path}: cannot load the model ({type(error).__name__}: {reason})"
        ) from None
    return Run(run_dir, config, model, class_names)
