"""The callbacks a run trains with (engine/training/callbacks.py)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from config import TrainingConfig
from engine.training import fitting
from engine.training.callbacks import StopOnNonFiniteLoss
from engine.training.trainer import TrainingError


def test_nan_loss_stops_with_a_clear_message(tmp_path):
    inputs = keras.Input((2,))
    trainer = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    trainer.compile(optimizer="sgd", loss="mse")
    features = np.array([[1.0, 2.0], [np.nan, 1.0]], dtype="float32")
    batches = tf.data.Dataset.from_tensor_slices((features, np.zeros((2, 1)))).batch(1)
    with pytest.raises(TrainingError, match="loss became nan at epoch 1, batch 2: lower"):
        fitting.fit(
            trainer,
            {"train": batches, "validation": batches},
            2,
            TrainingConfig(epochs=1),
            tmp_path,
            [StopOnNonFiniteLoss()],
            verbose=0,
        )
