"""Training dynamics: what a step records, how the file keeps epochs, and a tiny run's file
against the model's own predictions."""

import csv

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf

import train
from engine.training.dynamics import DynamicsLogger, TrainingDynamics
from inspection.methods.data_map import text_hashes
from models import get_model_parts, load_end_to_end_model
from run_folder import runs, saved_run
from tests.helpers import tiny_args


def test_a_step_records_probability_margin_and_correctness_at_the_positions():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(5, 3)).astype(np.float32) * 3
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    labels = np.array([0, 2, 1, 1, 0])
    positions = np.array([7, 1, 4, 0, 9])
    dynamics = TrainingDynamics(10)
    dynamics.record(
        tf.constant(positions), tf.constant(np.eye(3)[labels]), tf.constant(probabilities)
    )
    rows = dynamics.epoch_values()
    order = np.argsort(positions)
    assert rows["position"].tolist() == sorted(positions.tolist())
    own = logits[np.arange(5), labels]
    others = np.where(np.eye(3)[labels] > 0, -np.inf, logits).max(-1)
    np.testing.assert_allclose(
        rows["probability"], probabilities[np.arange(5), labels][order], rtol=1e-6
    )
    np.testing.assert_allclose(rows["margin"], (own - others)[order], atol=1e-5)
    assert rows["correct"].tolist() == (logits.argmax(-1) == labels)[order].tolist()
    dynamics.reset()
    assert len(dynamics.epoch_values()["position"]) == 0


def test_a_label_set_step_records_each_label_of_each_example():
    probabilities = np.array([[0.9, 0.2, 0.6], [0.3, 0.8, 0.1]], np.float32)
    given = np.array([[1, 0, 0], [1, 1, 0]], np.float32)
    dynamics = TrainingDynamics(4, num_labels=3)
    dynamics.record(tf.constant([3, 1]), tf.constant(given), tf.constant(probabilities))
    rows = dynamics.epoch_values()
    assert rows["position"].tolist() == [1, 1, 1, 3, 3, 3]
    assert rows["label"].tolist() == [0, 1, 2, 0, 1, 2]
    # p(what the data says): p where the text has the label, 1 - p where it lacks it.
    said = np.where(given > 0, probabilities, 1 - probabilities)[[1, 1, 1, 0, 0, 0], [0, 1, 2] * 2]
    np.testing.assert_allclose(rows["probability"], said, rtol=1e-6)
    np.testing.assert_allclose(rows["margin"], np.log(said / (1 - said)), atol=1e-5)
    assert rows["correct"].tolist() == [False, True, True, True, True, False]


class FixedDynamics:
    """Stands in for TrainingDynamics: each epoch 'records' the given rows."""

    def __init__(self):
        self.values = None

    def reset(self):
        pass

    def epoch_values(self):
        return self.values


def test_an_epoch_trained_again_replaces_its_rows_and_those_after_it(tmp_path):
    dynamics, path = FixedDynamics(), tmp_path / "dynamics.parquet"
    logger = DynamicsLogger(dynamics, path, text_hashes(["a", "b", "c"]))

    def epoch(epoch_index, probability):
        dynamics.values = {
            "position": np.array([0, 2]),
            "probability": np.full(2, probability),
            "margin": np.zeros(2),
            "correct": np.array([True, False]),
        }
        logger.on_epoch_end(epoch_index)

    for index, probability in enumerate([0.1, 0.2, 0.3]):
        epoch(index, probability)
    epoch(1, 0.9)  # a resumed run trains epoch 2 again: epoch 3's rows are stale too
    table = pd.read_parquet(path)
    assert table["epoch"].tolist() == [1, 1, 2, 2]
    np.testing.assert_allclose(table["probability"], [0.1, 0.1, 0.9, 0.9], rtol=1e-6)
    assert table["text_hash"].tolist()[:2] == text_hashes(["a", "c"]).tolist()
    assert list(table.columns) == [
        "epoch",
        "position",
        "text_hash",
        "probability",
        "margin",
        "correct",
    ]
    assert not (tmp_path / "dynamics.parquet.tmp").exists()


def test_a_tiny_runs_dynamics_equal_its_models_predictions_and_its_history(
    tmp_path, data_file, capsys
):
    # A learning rate of 1e-9 and no dropout: the weights every step saw are the saved
    # model's (not calibrated afterwards: the temperature would rescale its
    # probabilities), so each epoch's rows must be its predictions on the training texts.
    # The means per epoch must be history.csv's accuracy and (no label smoothing) loss.
    assert (
        train.main(
            tiny_args(
                tmp_path,
                data_file,
                "training.steps_per_epoch=null",
                "training.learning_rate=1e-9",
                "training.label_smoothing=0",
                "model.dropout=0",
                "training.epochs=2",
                "training.calibrate=false",
            )
        )
        == 0
    )
    assert "training.dynamics: auto -> true" in capsys.readouterr().out
    run_dir = tmp_path / "tiny"
    assert saved_run.load_run(run_dir).config.training.dynamics is True
    table = pd.read_parquet(run_dir / runs.DYNAMICS_FILE)
    texts, labels = saved_run.load_run(run_dir).load_split("train")
    assert (
        table.groupby("epoch")["position"].apply(sorted).tolist() == [list(range(len(texts)))] * 2
    )
    vectorizer, classifier = get_model_parts(load_end_to_end_model(run_dir / "model.keras"))
    ids = vectorizer(tf.constant(np.asarray(texts, dtype=str)))
    logits = np.asarray(classifier(ids, return_logits=True)["logits"])
    others = np.where(np.eye(2)[labels] > 0, -np.inf, logits).max(-1)
    probabilities = tf.nn.softmax(logits).numpy()[np.arange(len(labels)), labels]
    with open(run_dir / "history.csv") as file:
        history = list(csv.DictReader(file))
    for epoch, rows in table.groupby("epoch"):
        rows = rows.sort_values("position")
        assert rows["text_hash"].tolist() == text_hashes(texts).tolist()
        np.testing.assert_allclose(rows["probability"], probabilities, atol=1e-5)
        np.testing.assert_allclose(
            rows["margin"], logits[np.arange(len(labels)), labels] - others, atol=1e-4
        )
        assert rows["correct"].tolist() == (logits.argmax(-1) == labels).tolist()
        assert rows["correct"].mean() == pytest.approx(float(history[epoch - 1]["accuracy"]))
        assert -np.log(rows["probability"]).mean() == pytest.approx(
            float(history[epoch - 1]["loss"]), rel=1e-4
        )


def test_dynamics_on_a_stream_or_across_processes_is_a_one_line_error(tmp_path, data_file, capsys):
    assert (
        train.main(
            tiny_args(tmp_path, data_file, "dataset.streaming=true", "training.dynamics=true")
        )
        == 2
    )
    assert capsys.readouterr().err.strip() == (
        "train.py: error: training.dynamics: true needs the training split in memory and it "
        "is streamed; set dataset.streaming: false, or training.dynamics: false"
    )
    assert (
        train.main(
            tiny_args(
                tmp_path, data_file, "training.distribution=mirrored", "training.dynamics=true"
            )
        )
        == 2
    )
    assert "training.dynamics: true records from one process" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
