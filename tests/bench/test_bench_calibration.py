"""bench_calibration: one own-file set end to end (a recipe that trains in seconds), its row
read from the run's metrics.json and the saved model's evaluation, and the table."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_calibration as bench  # noqa: E402

from tests.helpers import TINY_RECIPE  # noqa: E402


def test_a_set_trains_evaluates_and_makes_its_row(tmp_path, builtin_data_dir, capsys):
    out = tmp_path / "results"
    args = ["--sets", "reviews", "--rows", "300", "--out", str(out), "--data-dir",
            str(builtin_data_dir), "--recipe", *TINY_RECIPE]  # fmt: skip
    bench.main(args)
    (row,) = json.loads((out / "calibration.json").read_text())
    run_dir = out / "calibration" / "runs" / "reviews"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    evaluated = json.loads((run_dir / "eval" / "test" / "metrics.json").read_text())
    assert row["temperature"] == metrics["calibration"]["temperature"]
    assert row["test_ece_before"] == metrics["calibration"]["test"]["ece_before"]
    assert row["saved_model_test_ece"] == evaluated["ece"]
    # The saved model's ECE is the one train.py computed after scaling, up to float32.
    assert row["saved_model_test_ece"] == pytest.approx(row["test_ece_after"], abs=1e-3)
    assert row["goal_met"] == (evaluated["ece"] <= bench.GOAL_ECE)
    assert 0 < row["ece_if_calibrated"] <= row["ece_if_calibrated_p95"]
    assert row["within_noise"] == (evaluated["ece"] <= evaluated["ece_if_calibrated_p95"])
    table = (out / "calibration.md").read_text()
    assert table.startswith("| set | T |") and "| reviews | " in table
    capsys.readouterr()
    bench.main([*args, "--reuse"])  # a finished run is not trained again, only evaluated
    printed = capsys.readouterr().out
    assert "train.py --config" not in printed and "evaluate.py" in printed
