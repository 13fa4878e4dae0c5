"""Fitting a model in its run folder: the callbacks that back it up and log it, the replay
of a resumed run's batches, the best epoch restored, the restored model's scores, and what
a finished run gives back (`RunResult`).

`train.py` and `pretrain.py` fit through `fit`, with the callbacks of `make_callbacks`, and
return a `RunResult`; the run folder's file names are `run_folder/runs.py`'s. Neither
command imports the other: what they share lives here.
"""

import dataclasses
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

from run_folder import runs

# Keras, TensorFlow and the modules built on them, and engine.reports, engine.label_sets
# and engine.calibration (scikit-learn and SciPy, seconds too), are imported by each
# function: `train.py` imports this module before it has checked the config.


@dataclasses.dataclass
class RunResult:
    """What `train.run_training` and `pretrain.run_pretraining` give back."""

    run_dir: Path
    metrics: dict
    resumed: bool
    worker: int | None = None  # a multi-worker run's worker that is not the chief


def epoch_steps(pipelines, training, stream_steps=None) -> int:
    """Steps per epoch: `training.steps_per_epoch`, or the train pipeline's batches (a
    stream's `stream_steps`: it never ends, an epoch is that many of its batches).

    A capped epoch must not exhaust the split: its train pipeline (in `pipelines`) is made
    to repeat, in the same seeded orders."""
    if stream_steps is not None:
        return training.steps_per_epoch or stream_steps
    if training.steps_per_epoch is None:
        return int(pipelines["train"].cardinality())
    pipelines["train"] = pipelines["train"].repeat()
    return training.steps_per_epoch


def monitor_mode(training) -> str:
    """Whether `training.monitor` is best when smallest (min) or largest (max)."""
    return "min" if training.monitor == "val_loss" else "max"


def make_callbacks(training, data, run_dir: Path, classifier=None) -> list:
    """Backup for resume, NaN stop, best checkpoint, history, TensorBoard, early stopping;
    with `training.attention_images`, the `classifier`'s attention maps in TensorBoard."""
    import keras
    import tensorflow as tf

    from engine.training.callbacks import (
        HistoryLogger,
        RandomStateBackup,
        ResumableEarlyStopping,
        StopOnNonFiniteLoss,
    )
    from inspection import AttentionImagesCallback

    monitor, mode = training.monitor, monitor_mode(training)
    earlier = [float(row[monitor]) for row in runs.read_history(run_dir)]
    best_path = run_dir / runs.BEST_WEIGHTS
    best_path.parent.mkdir(exist_ok=True)
    callbacks = [
        # First, so an epoch counts as done only once its backup is on disk.
        keras.callbacks.BackupAndRestore(str(run_dir / runs.BACKUP_DIR)),
        RandomStateBackup(run_dir / runs.BACKUP_DIR / "random_state.npy"),
        StopOnNonFiniteLoss(),
        keras.callbacks.ModelCheckpoint(
            best_path,
            monitor=monitor,
            mode=mode,
            save_best_only=True,
            save_weights_only=True,
            # A resumed run must only replace the best checkpoint with a better one.
            initial_value_threshold=(min if mode == "min" else max)(earlier) if earlier else None,
        ),
        HistoryLogger(str(run_dir / runs.HISTORY_FILE), append=True),
        keras.callbacks.TensorBoard(str(run_dir / runs.LOGS_DIR), write_graph=False),
    ]
    if training.attention_images:
        texts = data.first_texts("validation", training.attention_images)
        callbacks.append(
            AttentionImagesCallback(
                str(run_dir / runs.ATTENTION_LOGS_DIR),
                np.asarray(data.vectorizer(tf.constant(texts.astype(str)))),  # (B, T)
                classifier,
                vocabulary=data.vectorizer.get_vocabulary(),
            )
        )
    if training.early_stopping_patience:
        # fit() restores the best epoch from its checkpoint.
        callbacks.append(
            ResumableEarlyStopping(
                earlier, monitor=monitor, mode=mode, patience=training.early_stopping_patience
            )
        )
    return callbacks


def fit(trainer, pipelines, steps_per_epoch, training, run_dir, callbacks, verbose, replay=True):
    """Fits, then loads the best epoch's weights by `training.monitor` (across resumes too).

    A resumed run (BackupAndRestore restores weights, optimizer and epoch) also gets the
    batches the uninterrupted run would have had: the train pipeline draws a new seeded
    order for each iterator made from it, so the finished epochs' iterators are made (and
    dropped) first; a capped epoch (`steps_per_epoch`) reads one endless stream instead,
    so their batches are skipped. `replay=False` (a streamed split: skipping would read
    every finished epoch's rows again) starts the stream afresh instead.
    """
    train_batches = pipelines["train"]
    finished = len(runs.read_history(run_dir)) if replay else 0
    if finished and training.steps_per_epoch is not None:
        train_batches = train_batches.skip(finished * steps_per_epoch)
    else:
        for _ in range(finished):
            iter(train_batches)
    with warnings.catch_warnings():
        if not replay:
            # A stream's validation batches are counted by reading them: Keras warns when
            # its first pass ends (the training stream itself never does).
            warnings.filterwarnings("ignore", message="Your input ran out of data")
        trainer.fit(
            train_batches,
            validation_data=pipelines["validation"],
            epochs=training.epochs,
            steps_per_epoch=steps_per_epoch,
            callbacks=callbacks,
            verbose=(1 if sys.stdout.isatty() else 2) if verbose is None else verbose,
            shuffle=False,  # The train pipeline shuffles, seeded.
        )
    best_path = run_dir / runs.BEST_WEIGHTS
    if best_path.exists():
        trainer.load_weights(best_path)


def score_splits(classifier, pipelines, class_names, thresholds=None) -> dict:
    """{validation, test: metrics} of `classifier` on the batched pipelines: classification
    metrics, or with `thresholds` those of label sets (`engine.label_sets`)."""
    from engine.label_sets import split_metrics

    return split_metrics(_split_predictions(classifier, pipelines), class_names, thresholds)


def _split_predictions(classifier, pipelines) -> dict:
    """{validation, test: (probabilities, labels)} of `classifier`, one pass each."""
    from models import predict_batches

    splits = ("validation", "test")
    return dict(zip(splits, predict_batches(classifier, *(pipelines[s] for s in splits))))


def evaluate(classifier, pipelines, class_names, training, run_dir) -> dict:
    """Validation and test metrics of the restored classifier, epochs and best epoch. With
    `training.calibrate` a temperature is fitted on validation and folded into the
    classifier first (`engine.calibration`); then a multi-label classifier's thresholds are
    chosen on validation and written to the run folder (`engine.label_sets`)."""
    from engine.calibration import calibrate
    from engine.label_sets import scored_splits

    predictions = _split_predictions(classifier, pipelines)
    calibration = None
    if training.calibrate:
        calibration, predictions = calibrate(classifier, predictions, class_names)
    metrics = scored_splits(predictions, class_names, classifier.multi_label, run_dir)
    monitored = [float(row[training.monitor]) for row in runs.read_history(run_dir)]
    best = np.argmin if monitor_mode(training) == "min" else np.argmax
    metrics["epochs"] = len(monitored)
    metrics["best_epoch"] = int(best(monitored)) + 1 if monitored else 0
    metrics["num_parameters"] = int(classifier.count_params())
    metrics["class_names"] = list(class_names)
    if calibration is not None:
        metrics["calibration"] = calibration
    return metrics


def finish_run(run_dir: Path, final_dir: Path, keep_checkpoints: bool = False) -> None:
    """Makes the finished run final: its training checkpoints removed (`model.keras`, or a
    pretraining run's encoder file, holds the best epoch) unless `keep_checkpoints`, then
    the folder renamed to `final_dir` in one step."""
    if not keep_checkpoints:
        shutil.rmtree((run_dir / runs.BEST_WEIGHTS).parent, ignore_errors=True)
    runs.replace_folder(run_dir, final_dir)
