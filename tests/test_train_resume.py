"""train.py resumed: an interrupted run resumes with the same command, and a run killed
mid-epoch resumes to the same weights, metrics, history and dynamics as the uninterrupted
run."""

import csv
import signal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import train
from config.files import load_config
from models import get_model_parts, load_end_to_end_model
from run_folder import runs
from tests.helpers import ROOT, TINY, InterruptAfterEpoch, metrics_of, tiny_args
from train import run_training


def test_interrupted_run_resumes_with_the_same_command(tmp_path, data_file, capsys):
    args = tiny_args(tmp_path, data_file, "training.epochs=3")
    config = load_config(TINY, args[3:][:-1] + ["training.epochs=3"])
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
from run_folder import runs
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


@pytest.mark.parametrize("epoch", ["steps_per_epoch=8", "steps_per_epoch=null"])
def test_a_run_killed_mid_epoch_resumes_to_the_same_weights_and_metrics(
    tmp_path, data_file, epoch, capsys
):
    # Capped epochs read one endless stream, whole ones a new order per epoch: both resume
    # exactly. Validation accuracy reaches 1.0 within a few epochs, and with patience 1 the
    # run stops one epoch later. The kill comes in that last epoch: the resumed run stops
    # after it only if early stopping's count survived.
    overrides = [
        f"training.{epoch}",
        "training.epochs=8",
        "training.early_stopping_patience=1",
        "training.learning_rate=0.05",
        "training.monitor=val_accuracy",
    ]
    # Only the killed run needs a process of its own; the others train in this one.
    args = tiny_args(tmp_path / "whole", data_file, *overrides)
    assert train.main(args) == 0
    last = metrics_of(tmp_path / "whole" / "tiny")["epochs"] - 1
    assert 1 <= last < 7  # stopped early
    killed_args = tiny_args(tmp_path / "killed", data_file, *overrides)
    script = KILLED_MID_EPOCH.format(root=str(ROOT), epoch=last)
    killed = subprocess.run(
        [sys.executable, "-c", script, *killed_args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
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
    pd.testing.assert_frame_equal(
        pd.read_parquet(again / runs.DYNAMICS_FILE), pd.read_parquet(whole / runs.DYNAMICS_FILE)
    )
    for expected, actual in zip(
        get_model_parts(load_end_to_end_model(whole / "model.keras"))[1].weights,
        get_model_parts(load_end_to_end_model(again / "model.keras"))[1].weights,
        strict=True,
    ):
        np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))
