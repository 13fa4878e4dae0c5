"""The int8 bench on the tiny run: one row with both models' accuracy, size and time."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_int8  # noqa: E402


def test_a_row_per_run_with_the_int8_models_ratios(tiny_run_dir, capsys):
    assert bench_int8.main([str(tiny_run_dir), "--rounds", "1"]) == 0
    row = capsys.readouterr().out.strip().splitlines()[-1]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[0] == str(tiny_run_dir)
    float_accuracy, int8_accuracy = float(cells[1]), float(cells[2])
    assert 50 <= float_accuracy <= 100 and abs(int8_accuracy - float_accuracy) <= 10
    float_mb = float(cells[3])
    int8_mb, size_ratio = re.fullmatch(r"([\d.]+) \(([\d.]+)x\)", cells[4]).groups()
    assert float(int8_mb) <= float_mb and 0 < float(size_ratio) < 1
    assert re.fullmatch(r"[\d.]+ \([\d.]+x\)", cells[6])
