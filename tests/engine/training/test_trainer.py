import numpy as np
import tensorflow as tf

from config import ModelConfig, TrainingConfig
from engine.training.trainer import Trainer, build_trainer
from models import build_classifier


def test_fit_traces_its_train_and_test_steps_once(monkeypatch):
    # Building the optimizer and metrics inside the first trace made tf.function trace the
    # train step a second time (seconds of every run).
    traces = {"train": 0, "test": 0}

    def counted(kind):
        step = getattr(Trainer, f"{kind}_step")

        def counted_step(self, data):
            traces[kind] += 1  # Runs once per trace, not per step.
            return step(self, data)

        return counted_step

    for kind in traces:
        monkeypatch.setattr(Trainer, f"{kind}_step", counted(kind))
    classifier = build_classifier(
        ModelConfig(d_model=8, num_heads=2, intermediate_dim=8), 50, 16, num_classes=3
    )
    trainer = build_trainer(classifier, TrainingConfig(), steps_per_epoch=4)
    rng = np.random.default_rng(0)
    # Batches of three lengths, as length bucketing makes them.
    batches = [
        (rng.integers(1, 50, (4, length)), np.eye(3)[rng.integers(0, 3, 4)])
        for length in (3, 9, 16, 9)
    ]
    dataset = tf.data.Dataset.from_generator(
        lambda: iter(batches),
        output_signature=(
            tf.TensorSpec((None, None), tf.int64),
            tf.TensorSpec((None, 3), tf.float64),
        ),
    ).apply(tf.data.experimental.assert_cardinality(4))
    history = trainer.fit(dataset, validation_data=dataset, epochs=2, verbose=0)
    assert traces == {"train": 1, "test": 1}
    assert len(history.history["loss"]) == 2
    assert trainer.optimizer.iterations.numpy() == 8
