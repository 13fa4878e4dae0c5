"""train.py as a command: --help and --print-config, and its errors: one quiet line, exit
2, before any work and leaving no run folder behind."""

import os
import subprocess
import sys

import pytest

import train
from config.files import load_config
from data import DataError
from engine import cli
from tests.helpers import ROOT, TINY, tiny_args
from train import run_training


def run_train(args, env=None):
    """train.py in a process of its own: its start-up and its stderr are what is checked."""
    return subprocess.run(
        [sys.executable, "train.py", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.parametrize("script", ["train.py", "evaluate.py"])
def test_help(script):
    result = subprocess.run(
        [sys.executable, script, "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 0
    assert result.stdout.startswith("usage:")
    assert ("--set" if script == "train.py" else "--split") in result.stdout


def test_print_config_prints_the_resolved_config_with_comments(tmp_path, capsys):
    config_path = ROOT / "configs" / "default.yaml"
    assert (
        train.main(["--config", str(config_path), "--set", "training.epochs=3", "--print-config"])
        == 0
    )
    printed = capsys.readouterr().out
    assert (
        "  # Maximum epochs; early stopping usually ends the run sooner. auto: 10 from "
        "scratch, 2\n  # when fine-tuning a model.pretrained checkpoint (docs/training.md, "
        '"Defaults").\n  epochs: 3\n'
    ) in printed
    assert "  name: rotten_tomatoes\n" in printed
    path = tmp_path / "printed.yaml"
    path.write_text(printed)
    assert load_config(path) == load_config(
        config_path, ["training.epochs=3", "output.name=default"]
    )
    assert not (ROOT / "runs" / "default.partial").exists()


def test_config_errors_exit_2_before_any_work(tmp_path, capsys):
    root = tmp_path / "runs"
    assert train.main(["--config", TINY, "--set", "model.num_heads=3", f"output.root={root}"]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("train.py: error: model.num_heads:") and "\n" not in error
    assert not root.exists()


def test_bad_data_is_one_quiet_line_exit_2_and_leaves_no_run_folder(tmp_path):
    one_class = tmp_path / "one_class.csv"
    one_class.write_text("text,label\n" + "".join(f"text {i},pos\n" for i in range(30)))
    root = tmp_path / "runs"
    args = [
        "--config",
        TINY,
        "--set",
        "dataset.name=null",
        f"dataset.train_file={one_class}",
        f"output.root={root}",
    ]
    result = run_train(args)
    assert result.returncode == 2
    # TensorFlow's start-up lines are hidden: the error is all there is.
    assert result.stderr.splitlines() == [
        f"train.py: error: {one_class}: every training example has the label 'pos'; a "
        "classifier needs examples of at least two labels"
    ]
    assert result.stdout == ""
    assert list(root.iterdir()) == []
    verbose = run_train(args, env={**os.environ, cli.VERBOSE_ENV: "1"})
    assert verbose.returncode == 2 and len(verbose.stderr.splitlines()) > 1


def test_an_output_root_that_cannot_be_written_is_refused_before_data_work(tmp_path, capsys):
    in_the_way = tmp_path / "runs"
    in_the_way.write_text("a file, not a folder")
    assert (
        train.main(
            [
                "--config",
                TINY,
                "--set",
                f"output.root={in_the_way}",
                "dataset.name=null",
                "dataset.train_file=does_not_exist.csv",
            ]
        )
        == 2
    )
    error = capsys.readouterr().err.strip()
    assert error == (
        f"train.py: error: output.root: {in_the_way} is a file, not a folder; "
        "choose a folder with --set output.root=DIR"
    )
    read_only = tmp_path / "read_only"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        if os.access(read_only, os.W_OK):  # root may write anywhere: nothing to check then
            return
        assert (
            train.main(
                [
                    "--config",
                    TINY,
                    "--set",
                    f"output.root={read_only}",
                    "dataset.name=null",
                    "dataset.train_file=does_not_exist.csv",
                ]
            )
            == 2
        )
        error = capsys.readouterr().err.strip()
        assert (
            error.startswith(
                f"train.py: error: output.root: cannot write the run folder "
                f"{read_only}/tiny.partial"
            )
            and "\n" not in error
        )
    finally:
        read_only.chmod(0o700)


def test_a_run_failing_before_its_first_epoch_leaves_nothing(tmp_path, data_file, monkeypatch):
    def no_vectors(*args, **kwargs):
        raise DataError("could not download the word vectors")

    monkeypatch.setattr(train, "build_model", no_vectors)
    config = load_config(TINY, tiny_args(tmp_path, data_file)[3:])
    with pytest.raises(DataError):
        run_training(config)
    assert list(tmp_path.iterdir()) == []
