"""Training dynamics: each training example's probability of its own label, margin and
correctness at every epoch, read from the training step's own forward pass. For label sets
(sigmoid outputs) every (example, label) is recorded: the probability of what the data
says (that the text has the label, or lacks it), its logit margin, and whether a 0.5 cut
agrees, as confident learning looks at multi-label data one label at a time.

Data Cartography (Swayamdipta et al. 2020) and Area Under the Margin (Pleiss et al. 2020)
record them this way, as the epoch goes: nothing is computed twice, so recording costs
one scatter into a vector of the training split's size per step (docs/data_quality.md
has the measured cost). The trainer (`trainer.Trainer.record_dynamics`) hands each step's
predictions to a `TrainingDynamics`; a `DynamicsLogger` callback writes every finished
epoch's values to the run folder's dynamics.parquet.
"""

import os

import keras
import numpy as np
import pandas as pd
import tensorflow as tf

from run_folder import runs

# The file's columns, one row per (epoch, example seen in it); label sets add the label's
# index (`runs.DYNAMICS_LABEL`), one row per (epoch, example, label).
COLUMNS = ("epoch", "position", "text_hash", "probability", "margin", "correct")
# Probabilities are floored here before their log: a margin stays finite (at most ~69).
PROBABILITY_FLOOR = 1e-30


class TrainingDynamics:
    """One epoch's values per training example, filled by the training steps.

    Args:
        num_examples: size of the training split; positions run from 0 to it.
        num_labels: for label sets (multi-hot targets, sigmoid outputs), how many labels;
            None: one label per example (one-hot targets, softmax outputs).

    Example:
    >>> dynamics = TrainingDynamics(3)
    >>> dynamics.record(tf.constant([2, 0]), tf.constant([[0., 1.], [1., 0.]]),
    ...                 tf.constant([[0.2, 0.8], [0.25, 0.75]]))
    >>> rows = dynamics.epoch_values()
    >>> rows["position"].tolist(), [round(float(p), 2) for p in rows["probability"]]
    ([0, 2], [0.25, 0.8])
    >>> # log(.25 / .75) and log(.8 / .2)
    >>> [round(float(m), 3) for m in rows["margin"]], rows["correct"].tolist()
    ([-1.099, 1.386], [False, True])
    """

    def __init__(self, num_examples, num_labels=None):
        self.num_examples, self.num_labels = int(num_examples), num_labels
        # Columns: probability, margin, correct, seen; a row per example, or per (example,
        # label) at example * num_labels + label. Not a Keras weight: no checkpoint holds
        # it, each epoch starts it afresh.
        rows = self.num_examples * (num_labels or 1)
        self.values = tf.Variable(tf.zeros((rows, 4)), trainable=False, name="training_dynamics")
        self.pending_positions = None  # the positions of the step being traced

    def record(self, positions, y, y_pred):
        """Stores one batch: `positions` int (B,), one-hot (or multi-hot) `y` (B, C),
        probabilities `y_pred` (B, C)."""
        y, y_pred = tf.cast(y, tf.float32), tf.cast(y_pred, tf.float32)
        if self.num_labels:
            return self._record_label_sets(positions, y, y_pred)
        label = tf.argmax(y, axis=-1)
        log_probabilities = tf.math.log(tf.maximum(y_pred, PROBABILITY_FLOOR))  # (B, C)
        own = tf.reduce_sum(log_probabilities * y, axis=-1)
        # The largest other class: the own label's entry pushed below every other.
        others = tf.reduce_max(log_probabilities - 1e4 * y, axis=-1)
        correct = tf.cast(tf.argmax(y_pred, axis=-1) == label, tf.float32)
        updates = tf.stack([tf.exp(own), own - others, correct, tf.ones_like(own)], axis=-1)
        self.values.scatter_nd_update(tf.reshape(tf.cast(positions, tf.int64), (-1, 1)), updates)

    def _record_label_sets(self, positions, y, y_pred):
        """Per (example, label): p(what the data says), its logit, and a 0.5 cut's verdict."""
        given = tf.where(y > 0.5, y_pred, 1 - y_pred)  # (B, C)
        log_given = tf.math.log(tf.maximum(given, PROBABILITY_FLOOR))
        log_other = tf.math.log(tf.maximum(1 - given, PROBABILITY_FLOOR))
        correct = tf.cast(given > 0.5, tf.float32)
        updates = tf.stack([given, log_given - log_other, correct, tf.ones_like(given)], -1)
        rows = tf.cast(positions, tf.int64)[:, None] * self.num_labels + tf.range(
            self.num_labels, dtype=tf.int64
        )
        self.values.scatter_nd_update(tf.reshape(rows, (-1, 1)), tf.reshape(updates, (-1, 4)))

    def reset(self):
        self.values.assign(tf.zeros_like(self.values))

    def epoch_values(self) -> dict:
        """{position, probability, margin, correct} of the examples seen this epoch; for
        label sets a row per (example, label), with the label's index (runs.DYNAMICS_LABEL)."""
        values = self.values.numpy()
        seen = np.flatnonzero(values[:, 3] > 0)
        rows = {
            "position": seen // (self.num_labels or 1),
            "probability": values[seen, 0],
            "margin": values[seen, 1],
            "correct": values[seen, 2] > 0,
        }
        if self.num_labels:
            rows[runs.DYNAMICS_LABEL] = seen % self.num_labels
        return rows


class DynamicsLogger(keras.callbacks.Callback):
    """Writes each finished epoch's `TrainingDynamics` to `path` (Parquet, `COLUMNS`).

    The file is rewritten whole and atomically each epoch. Put it before BackupAndRestore:
    an epoch whose backup never made it to disk is trained again on resume, and its rows
    (and any later ones) are replaced, so a resumed run's file equals an uninterrupted one's.
    """

    def __init__(self, dynamics, path, hashes):
        super().__init__()
        self.dynamics, self.path, self.hashes = dynamics, str(path), np.asarray(hashes)

    def on_epoch_begin(self, epoch, logs=None):
        self.dynamics.reset()

    def on_epoch_end(self, epoch, logs=None):
        values = self.dynamics.epoch_values()
        rows = pd.DataFrame(
            {
                "epoch": np.full(len(values["position"]), epoch + 1, np.int32),
                "text_hash": self.hashes[values["position"]],
                **values,
            }
        )
        if os.path.exists(self.path):
            earlier = pd.read_parquet(self.path)
            rows = pd.concat([earlier[earlier["epoch"] <= epoch], rows], ignore_index=True)
        temporary = f"{self.path}.tmp"
        labelled = runs.DYNAMICS_LABEL in rows
        columns = [*COLUMNS, *([runs.DYNAMICS_LABEL] if labelled else [])]
        rows[columns].to_parquet(temporary, index=False)
        os.replace(temporary, self.path)
