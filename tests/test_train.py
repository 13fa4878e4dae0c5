"""train.py end to end on a tiny fixture: outputs, reload, overwrite, determinism, mixed
precision, attention images, the monitored metric and the schema's defaults (resumes:
test_train_resume.py; the command's help and errors: test_train_command.py; distributed
training: test_train_distributed.py)."""

import csv
import json
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

import train
from config.files import load_config
from data import load_text_splits
from engine.reports import classification_metrics
from models import get_model_parts, load_end_to_end_model
from run_folder import runs
from run_folder.saved_run import load_run
from tests.helpers import metrics_of, shared_tiny_run_args, tiny_args


def test_tiny_trains_end_to_end_and_its_saved_model_reloads(tiny_run_dir):
    tiny_run = tiny_run_dir
    names = {path.name for path in tiny_run.iterdir()}
    assert {"config.yaml", "model.keras", "history.csv", "labels.json", "metrics.json"} <= names
    # Training's scratch files went: the backup, and the best epoch's checkpoint, which
    # model.keras holds (output.keep_checkpoints).
    assert not {"backup", "checkpoints", "states"} & names
    assert not tiny_run.with_name("tiny.partial").exists()
    assert json.loads((tiny_run / "labels.json").read_text()) == ["negative", "positive"]
    assert load_config(tiny_run / "config.yaml").training.epochs == 2
    metrics = metrics_of(tiny_run)
    assert metrics["epochs"] == 2
    for split in ("validation", "test"):
        assert set(metrics[split]) >= {"accuracy", "macro_f1", "weighted_f1", "loss"}
        assert 0.0 <= metrics[split]["accuracy"] <= 1.0

    # The saved end-to-end model, reloaded in safe mode in this process, reproduces the
    # validation metrics computed during training from the token-id pipeline.
    texts, labels = load_text_splits(load_config(tiny_run / "config.yaml").dataset).validation
    model = load_end_to_end_model(tiny_run / "model.keras")
    probabilities = np.asarray(model(texts.astype(str), training=False))
    again = classification_metrics(labels, probabilities, 2)
    assert again["accuracy"] == metrics["validation"]["accuracy"]
    assert again["loss"] == pytest.approx(metrics["validation"]["loss"], abs=1e-6)
    reloaded = load_end_to_end_model(tiny_run / "model.keras")
    np.testing.assert_array_equal(np.asarray(reloaded(texts.astype(str))), probabilities)


def test_same_command_twice_gives_same_metrics_and_never_overwrites(
    tiny_run_dir, data_file, tmp_path, capsys
):
    # The session's run again, keeping its checkpoints: a setting that changes no number.
    args = shared_tiny_run_args(tmp_path, data_file, "output.keep_checkpoints=true")
    assert train.main(args) == 0
    assert (tmp_path / "tiny" / runs.BEST_WEIGHTS).is_file()
    assert metrics_of(tmp_path / "tiny") == metrics_of(tiny_run_dir)

    capsys.readouterr()
    assert train.main(args) == 2
    error = capsys.readouterr().err
    assert "already holds a finished run" in error and "--overwrite" in error


def test_mixed_precision_stays_numerically_sane(tmp_path, data_file):
    assert train.main(tiny_args(tmp_path, data_file, "training.mixed_precision=true")) == 0
    assert keras.config.dtype_policy().name == "float32"  # Restored after the run.
    metrics = metrics_of(tmp_path / "tiny")
    assert all(math.isfinite(metrics[split]["loss"]) for split in ("validation", "test"))
    model = load_end_to_end_model(tmp_path / "tiny" / "model.keras")
    _, classifier = get_model_parts(model)
    assert classifier.encoder.blocks[0].dtype_policy.name == "mixed_float16"
    probabilities = np.asarray(model(np.array(["a good film", "dull"])))
    assert probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(axis=-1), 1.0, rtol=1e-5)


def test_attention_images_are_logged_each_epoch(tiny_run_dir):
    # The shared run trains with training.attention_images=2 (tests/conftest.py).
    steps = {}
    for event_file in (tiny_run_dir / "logs" / "attention").glob("events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(str(event_file)):
            for value in event.summary.value:
                steps.setdefault(value.tag, []).append(event.step)
                png = tf.make_ndarray(value.tensor)[2]
                assert png[:4] == b"\x89PNG"
    assert steps == {"attention/0": [0, 1], "attention/1": [0, 1]}


def test_monitor_val_accuracy_keeps_the_epoch_with_the_best_validation_accuracy(
    tmp_path, data_file
):
    args = tiny_args(
        tmp_path,
        data_file,
        "training.epochs=3",
        "training.monitor=val_accuracy",
        "training.early_stopping_patience=0",
    )
    assert train.main(args) == 0
    run_dir = tmp_path / "tiny"
    with (run_dir / "history.csv").open(newline="") as file:
        accuracies = [float(row["val_accuracy"]) for row in csv.DictReader(file)]
    metrics = metrics_of(run_dir)
    assert metrics["best_epoch"] == int(np.argmax(accuracies)) + 1
    # The kept weights are the best epoch's: their validation accuracy is the best one logged.
    assert metrics["validation"]["accuracy"] == pytest.approx(max(accuracies), abs=1e-6)


def test_auto_sequence_length_is_resolved_and_saved(tiny_run_dir):
    # The fixture's reviews have 5 to 14 words: the cap rounds up to 16.
    config = load_config(tiny_run_dir / "config.yaml")
    assert config.text.sequence_length == 16
    vectorizer, _ = load_run(tiny_run_dir).parts
    assert vectorizer.get_config()["output_sequence_length"] == 16


def test_a_csv_file_and_pretrained_null_train_a_sensible_model_from_scratch(tmp_path, data_file):
    # Everything else from the schema's defaults: auto cap, default model and schedule (the
    # default checkpoint's run: tests/test_train_pretrained.py).
    config = tmp_path / "mine.yaml"
    config.write_text(f"dataset:\n  train_file: {data_file}\nmodel:\n  pretrained: null\n")
    assert train.main(["--config", str(config), "--set", f"output.root={tmp_path}"]) == 0
    metrics = metrics_of(tmp_path / "mine")
    # Two sentiment words decide each label: an easy task the defaults must learn.
    assert metrics["validation"]["accuracy"] >= 0.9 and metrics["test"]["accuracy"] >= 0.8
    assert load_config(tmp_path / "mine" / "config.yaml").text.sequence_length == 16
