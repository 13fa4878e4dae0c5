"""The Keras callbacks a run trains with beside Keras' own: the NaN stop whose error says
what to try, early stopping and the dropout layers' random state carried across a resume,
and the history with epochs counted from 1. `engine.training.fitting.make_callbacks` puts
them in order.
"""

import math
import os

import keras
import numpy as np

from engine.training.trainer import TrainingError


class StopOnNonFiniteLoss(keras.callbacks.TerminateOnNaN):
    """Keras' TerminateOnNaN(raise_error=True), whose error says where and what to try.

    Raising (rather than stop_training) skips BackupAndRestore.on_train_end, so the last
    good epoch's backup survives for a resume.

    Example:
    >>> callback = StopOnNonFiniteLoss()
    >>> callback.on_epoch_begin(2)
    >>> callback.on_batch_end(4, {"loss": float("nan")})
    Traceback (most recent call last):
    ...
    engine.training.trainer.TrainingError: training loss became nan at epoch 3, batch 5: \
lower training.learning_rate, keep training.clipnorm set, or turn off training.mixed_precision
    """

    def __init__(self):
        super().__init__(raise_error=True)
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            raise TrainingError(
                f"training loss became {float(loss)} at epoch {self.epoch + 1}, batch "
                f"{batch + 1}: lower training.learning_rate, keep training.clipnorm set, or "
                "turn off training.mixed_precision"
            )


class ResumableEarlyStopping(keras.callbacks.EarlyStopping):
    """EarlyStopping that carries on from a resumed run's finished epochs.

    Keras' EarlyStopping starts counting afresh in every `fit`, so after a resume its best
    value and patience would restart. This one replays `earlier` (the monitored values of
    the finished epochs, from history.csv) at the start of training: it stops at the same
    epoch as the uninterrupted run would. It never restores weights itself: train.py loads
    the best checkpoint, which survives resumes.

    Example:
    >>> callback = ResumableEarlyStopping([0.5, 0.4, 0.45], monitor="val_loss", mode="min")
    >>> callback.on_train_begin()
    >>> callback.best, callback.wait, callback.best_epoch
    (0.4, 1, 1)
    """

    def __init__(self, earlier, **kwargs):
        super().__init__(restore_best_weights=False, **kwargs)
        self.earlier = list(earlier)

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        if self.monitor_op is None:
            self._set_monitor_op()
        for epoch, value in enumerate(self.earlier):
            self.wait += 1
            if self._is_improvement(value, self.best):
                self.best, self.best_epoch, self.wait = value, epoch, 0


class HistoryLogger(keras.callbacks.CSVLogger):
    """Keras' CSVLogger with epochs counted from 1, as training prints them and as
    metrics.json's `best_epoch` counts (CSVLogger itself writes Keras' 0-based index)."""

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch + 1, logs)


class RandomStateBackup(keras.callbacks.Callback):
    """Backs up the dropout layers' random state with every epoch; restores it on resume.

    Keras' BackupAndRestore saves weights and optimizer, not the seed generators' states
    (`model.variables`, not `model.weights`), so a resumed run would draw the dropout masks
    of its first epoch again. Put it right after BackupAndRestore, with a path in the same
    backup folder (which BackupAndRestore deletes when training ends).
    """

    def __init__(self, path):
        super().__init__()
        self.path = str(path)

    def _states(self):
        return [
            variable for variable in self.model.variables if "seed_generator_state" in variable.path
        ]

    def on_train_begin(self, logs=None):
        if os.path.exists(self.path):
            saved = np.load(self.path, allow_pickle=False)
            for variable, value in zip(self._states(), saved, strict=True):
                variable.assign(value)

    def on_epoch_end(self, epoch, logs=None):
        states = self._states()
        if not states:
            return
        staged = f"{self.path}.partial.npy"
        np.save(staged, np.stack([np.asarray(state) for state in states]))
        os.replace(staged, self.path)
