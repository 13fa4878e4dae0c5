"""The attention bench's tiny mode, in-process: every length and mode gets a row with a
finite ratio, and the memory table a measured row (issue 52: it divided by a zero growth)."""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_attention  # noqa: E402


def table_rows(output):
    """The cells of each markdown row whose first cell is a number."""
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in output.splitlines()
        if line.startswith("|")
    ]
    return [row for row in rows if row[0].isdigit()]


def test_the_tiny_mode_prints_every_row_with_finite_ratios(capsys):
    assert bench_attention.main(["--tiny"]) == 0
    rows = table_rows(capsys.readouterr().out)
    speed, memory = rows[:-1], rows[-1]
    assert [(int(row[0]), row[1]) for row in speed] == [
        (length, mode) for length in bench_attention.TINY_LENGTHS for mode in bench_attention.MODES
    ]
    for row in speed:
        assert all(math.isfinite(float(cell)) and float(cell) > 0 for cell in row[2:])
    assert memory[:2] == [str(max(bench_attention.TINY_LENGTHS)), "train"]
    ours, theirs, ratio = map(float, memory[2:])  # measured: TensorFlow's CPU statistics
    assert ours > 0 and theirs > 0 and math.isclose(ratio, ours / theirs, rel_tol=0.05)


def test_a_layer_without_a_measurement_reads_not_measurable():
    row = bench_attention.memory_row(32, {"ours": 4.5, "keras": None})
    assert row == "| 32 | train | 4.5 | not measurable here | not measurable here |"
