"""train.py end to end on a tiny fixture: outputs, reload, overwrite, resume, determinism,
mixed precision, errors and --help (distributed training: test_train_distributed.py)."""

import csv
import json
import math
import os
import signal
import subprocess
import sys

import keras
import numpy as np
import pandas as pd
import pytest

import train
from config import TrainingConfig
from config.files import load_config
from engine import cli, runs
from engine.training import fitting
from engine.training.trainer import StopOnNonFiniteLoss, TrainingError
from tests.helpers import (
    ROOT,
    TINY,
    InterruptAfterEpoch,
    metrics_of,
    shared_tiny_run_args,
    tiny_args,
)
from train import run_training


def test_tiny_trains_end_to_end_and_its_saved_model_reloads(tiny_run_dir):
    tiny_run = tiny_run_dir
    names = {path.name for path in tiny_run.iterdir()}
    assert {"config.yaml", "model.keras", "history.csv", "labels.json", "metrics.json"
            } <= names
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
    from data import load_text_splits
    from engine.reports import classification_metrics
    from models import load_end_to_end_model

    texts, labels = load_text_splits(load_config(tiny_run / "config.yaml").dataset).validation
    model = load_end_to_end_model(tiny_run / "model.keras")
    probabilities = np.asarray(model(texts.astype(str), training=False))
    again = classification_metrics(labels, probabilities, 2)
    assert again["accuracy"] == metrics["validation"]["accuracy"]
    assert again["loss"] == pytest.approx(metrics["validation"]["loss"], abs=1e-6)
    reloaded = load_end_to_end_model(tiny_run / "model.keras")
    np.testing.assert_array_equal(np.asarray(reloaded(texts.astype(str))), probabilities)


def test_same_command_twice_gives_same_metrics_and_never_overwrites(
        tiny_run_dir, data_file, tmp_path, capsys):
    # The session's run again, keeping its checkpoints: a setting that changes no number.
    args = shared_tiny_run_args(tmp_path, data_file, "output.keep_checkpoints=true")
    assert train.main(args) == 0
    assert (tmp_path / "tiny" / runs.BEST_WEIGHTS).is_file()
    assert metrics_of(tmp_path / "tiny") == metrics_of(tiny_run_dir)

    capsys.readouterr()
    assert train.main(args) == 2
    error = capsys.readouterr().err
    assert "already holds a finished run" in error and "--overwrite" in error


def test_interrupted_run_resumes_with_the_same_command(tmp_path, data_file, capsys):
    args = tiny_args(tmp_path, data_file, "training.epochs=3")
    config = load_config(TINY, args[3:][: -1] + ["training.epochs=3"])
    with pytest.raises(KeyboardInterrupt):
        run_training(config, callbacks=[InterruptAfterEpoch(1)])
    partial = tmp_path / "tiny.partial"
    assert partial.is_dir() and not (tmp_path / "tiny").exists()
    assert not (partial / "model.keras").exists()
    assert len((partial / "history.csv").read_text().splitlines()) == 1 + 2

    # A different config must not silently take over the interrupted run.
    capsys.readouterr()
    assert train.main(args[:-1] + ["training.epochs=4"]) == 2
    assert "interrupted run with a different config" in capsys.readouterr().err

    assert train.main(args) == 0
    assert "Resuming the interrupted run" in capsys.readouterr().out
    with open(tmp_path / "tiny" / "history.csv") as file:
        epochs = [int(row["epoch"]) for row in csv.DictReader(file)]
    assert epochs == [1, 2, 3]  # counted as metrics.json's best_epoch is
    assert not partial.exists()
    assert metrics_of(tmp_path / "tiny")["epochs"] == 3


KILLED_MID_EPOCH = """
import os, signal, sys
import keras
sys.path.insert(0, {root!r})
from engine import cli
from engine import runs
import train
from config.files import load_config

class KillMidEpoch(keras.callbacks.Callback):
    def on_train_batch_begin(self, batch, logs=None):
        if self.epoch == {epoch} and batch == 4:
            os.kill(os.getpid(), signal.SIGKILL)  # no clean-up of any kind
    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

args = sys.argv[1:]
train.run_training(load_config(args[1], args[3:]), callbacks=[KillMidEpoch()])
"""


def run_command(args, script=None):
    command = [sys.executable, *(["-c", script] if script else ["train.py"]), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.parametrize("epoch", ["steps_per_epoch=8", "steps_per_epoch=null"])
def test_a_run_killed_mid_epoch_resumes_to_the_same_weights_and_metrics(
        tmp_path, data_file, epoch, capsys):
    # Capped epochs read one endless stream, whole ones a new order per epoch: both resume
    # exactly. Validation accuracy reaches 1.0 within a few epochs, and with patience 1 the
    # run stops one epoch later. The kill comes in that last epoch: the resumed run stops
    # after it only if early stopping's count survived.
    overrides = [f"training.{epoch}", "training.epochs=8", "training.early_stopping_patience=1",
                 "training.learning_rate=0.05", "training.monitor=val_accuracy"]
    # Only the killed run needs a process of its own; the others train in this one.
    args = tiny_args(tmp_path / "whole", data_file, *overrides)
    assert train.main(args) == 0
    last = metrics_of(tmp_path / "whole" / "tiny")["epochs"] - 1
    assert 1 <= last < 7  # stopped early
    killed_args = tiny_args(tmp_path / "killed", data_file, *overrides)
    killed = run_command(killed_args, KILLED_MID_EPOCH.format(root=str(ROOT), epoch=last))
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    partial = tmp_path / "killed" / "tiny.partial"
    assert len(runs.read_history(partial)) == last  # killed in the last epoch

    capsys.readouterr()
    assert train.main(killed_args) == 0
    assert "Resuming the interrupted run" in capsys.readouterr().out
    whole, again = tmp_path / "whole" / "tiny", tmp_path / "killed" / "tiny"
    assert runs.read_history(again) == runs.read_history(whole)
    assert metrics_of(again) == metrics_of(whole)
    # The killed epoch's dynamics are recorded again, the finished ones' kept.
    pd.testing.assert_frame_equal(pd.read_parquet(again / runs.DYNAMICS_FILE),
                                  pd.read_parquet(whole / runs.DYNAMICS_FILE))
    from models import get_model_parts, load_end_to_end_model

    for expected, actual in zip(
            get_model_parts(load_end_to_end_model(whole / "model.keras"))[1].weights,
            get_model_parts(load_end_to_end_model(again / "model.keras"))[1].weights,
            strict=True):
        np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))


def test_bad_data_is_one_quiet_line_exit_2_and_leaves_no_run_folder(tmp_path):
    one_class = tmp_path / "one_class.csv"
    one_class.write_text("text,label\n" + "".join(f"text {i},pos\n" for i in range(30)))
    root = tmp_path / "runs"
    args = ["--config", TINY, "--set", "dataset.name=null", f"dataset.train_file={one_class}",
            f"output.root={root}"]
    result = run_command(args)
    assert result.returncode == 2
    # TensorFlow's start-up lines are hidden: the error is all there is.
    assert result.stderr.splitlines() == [
        f"train.py: error: {one_class}: every training example has the label 'pos'; a "
        "classifier needs examples of at least two labels"]
    assert result.stdout == ""
    assert list(root.iterdir()) == []
    verbose = subprocess.run([sys.executable, "train.py", *args], capture_output=True, text=True,
                             timeout=300, cwd=ROOT, env={**os.environ, cli.VERBOSE_ENV: "1"})
    assert verbose.returncode == 2 and len(verbose.stderr.splitlines()) > 1


def test_an_output_root_that_cannot_be_written_is_refused_before_data_work(tmp_path, capsys):
    in_the_way = tmp_path / "runs"
    in_the_way.write_text("a file, not a folder")
    assert train.main(["--config", TINY, "--set", f"output.root={in_the_way}",
                       "dataset.name=null", "dataset.train_file=does_not_exist.csv"]) == 2
    error = capsys.readouterr().err.strip()
    assert error == (f"train.py: error: output.root: {in_the_way} is a file, not a folder; "
                     "choose a folder with --set output.root=DIR")
    read_only = tmp_path / "read_only"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        if os.access(read_only, os.W_OK):  # root may write anywhere: nothing to check then
            return
        assert train.main(["--config", TINY, "--set", f"output.root={read_only}",
                           "dataset.name=null", "dataset.train_file=does_not_exist.csv"]) == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith(f"train.py: error: output.root: cannot write the run folder "
                                f"{read_only}/tiny.partial") and "\n" not in error
    finally:
        read_only.chmod(0o700)


def test_a_run_failing_before_its_first_epoch_leaves_nothing(tmp_path, data_file, monkeypatch):
    from data import DataError

    def no_vectors(*args, **kwargs):
        raise DataError("could not download the word vectors")

    monkeypatch.setattr(train, "build_model", no_vectors)
    config = load_config(TINY, tiny_args(tmp_path, data_file)[3:])
    with pytest.raises(DataError):
        run_training(config)
    assert list(tmp_path.iterdir()) == []


def test_mixed_precision_stays_numerically_sane(tmp_path, data_file):
    assert train.main(tiny_args(tmp_path, data_file, "training.mixed_precision=true")) == 0
    assert keras.config.dtype_policy().name == "float32"  # Restored after the run.
    metrics = metrics_of(tmp_path / "tiny")
    assert all(math.isfinite(metrics[split]["loss"]) for split in ("validation", "test"))
    from models import get_model_parts, load_end_to_end_model

    model = load_end_to_end_model(tmp_path / "tiny" / "model.keras")
    _, classifier = get_model_parts(model)
    assert classifier.encoder.blocks[0].dtype_policy.name == "mixed_float16"
    probabilities = np.asarray(model(np.array(["a good film", "dull"])))
    assert probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(axis=-1), 1.0, rtol=1e-5)


def test_nan_loss_stops_with_a_clear_message(tmp_path):
    import tensorflow as tf

    inputs = keras.Input((2,))
    trainer = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    trainer.compile(optimizer="sgd", loss="mse")
    features = np.array([[1.0, 2.0], [np.nan, 1.0]], dtype="float32")
    batches = tf.data.Dataset.from_tensor_slices((features, np.zeros((2, 1)))).batch(1)
    with pytest.raises(TrainingError, match="loss became nan at epoch 1, batch 2: lower"):
        fitting.fit(trainer, {"train": batches, "validation": batches}, 2,
                    TrainingConfig(epochs=1), tmp_path, [StopOnNonFiniteLoss()], verbose=0)


def test_config_errors_exit_2_before_any_work(tmp_path, capsys):
    root = tmp_path / "runs"
    assert train.main(["--config", TINY, "--set", "model.num_heads=3",
                       f"output.root={root}"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("train.py: error: model.num_heads:") and "\n" not in error
    assert not root.exists()


@pytest.mark.parametrize("script", ["train.py", "evaluate.py"])
def test_help(script):
    result = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True,
                            cwd=ROOT, timeout=60)
    assert result.returncode == 0
    assert result.stdout.startswith("usage:")
    assert ("--set" if script == "train.py" else "--split") in result.stdout


def test_attention_images_are_logged_each_epoch(tiny_run_dir):
    # The shared run trains with training.attention_images=2 (tests/conftest.py).
    import tensorflow as tf

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
    args = tiny_args(tmp_path, data_file, "training.epochs=3", "training.monitor=val_accuracy",
                     "training.early_stopping_patience=0")
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
    from engine.runs import load_run

    vectorizer, _ = load_run(tiny_run_dir).parts
    assert vectorizer.get_config()["output_sequence_length"] == 16


def test_a_csv_file_and_pretrained_null_train_a_sensible_model_from_scratch(tmp_path,
                                                                            data_file):
    # Everything else from the schema's defaults: auto cap, default model and schedule (the
    # default checkpoint's run: tests/test_train_pretrained.py).
    config = tmp_path / "mine.yaml"
    config.write_text(f"dataset:\n  train_file: {data_file}\nmodel:\n  pretrained: null\n")
    assert train.main(["--config", str(config), "--set", f"output.root={tmp_path}"]) == 0
    metrics = metrics_of(tmp_path / "mine")
    # Two sentiment words decide each label: an easy task the defaults must learn.
    assert metrics["validation"]["accuracy"] >= 0.9 and metrics["test"]["accuracy"] >= 0.8
    assert load_config(tmp_path / "mine" / "config.yaml").text.sequence_length == 16


def test_print_config_prints_the_resolved_config_with_comments(tmp_path, capsys):
    config_path = ROOT / "configs" / "default.yaml"
    assert train.main(["--config", str(config_path), "--set", "training.epochs=3",
                       "--print-config"]) == 0
    printed = capsys.readouterr().out
    assert ("  # Maximum epochs; early stopping usually ends the run sooner. auto: 10 from "
            "scratch, 2\n  # when fine-tuning a model.pretrained checkpoint (docs/training.md, "
            "\"Defaults\").\n  epochs: 3\n") in printed
    assert "  name: rotten_tomatoes\n" in printed
    path = tmp_path / "printed.yaml"
    path.write_text(printed)
    assert load_config(path) == load_config(config_path, ["training.epochs=3",
                                                          "output.name=default"])
    assert not (ROOT / "runs" / "default.partial").exists()
