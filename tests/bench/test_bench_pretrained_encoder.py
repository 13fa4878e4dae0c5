"""bench/bench_pretrained_encoder.py on a tiny BERT checkpoint: the equality gate, the
table's rows, the FLOP count, and its command line."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.training.starting_weights.checkpoints import read_checkpoint
from tests.models.bert_reference import write_tiny_checkpoint

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import bench_pretrained_encoder as bench  # noqa: E402

DIFFERENCE = re.compile(
    r"max \|ours - keras-hub\| of the last hidden states, real tokens: "
    r"(\S+) .*as shipped \(tanh GELU\): (\S+)"
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_tiny_checkpoint(tmp_path_factory.mktemp("bert"), num_layers=2)


def test_quick_run_checks_the_encoders_agree_and_prints_a_row_per_length_and_mode(folder, capsys):
    assert bench.main(["--quick", "--checkpoint", str(folder)]) == 0
    output = capsys.readouterr().out
    difference, shipped = map(float, DIFFERENCE.search(output).groups())
    assert difference <= bench.TOLERANCE
    # keras-hub's own tanh GELU is another function: the reason it is swapped for the exact.
    assert shipped > bench.TOLERANCE
    rows = [line.split("|")[1:-1] for line in output.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [(int(row[0]), row[1].strip()) for row in rows] == [
        (8, "inference"),
        (8, "train step"),
        (16, "inference"),
        (16, "train step"),
    ]
    for _, _, ours, theirs, ratio, rate, share in rows:
        ours, theirs, ratio = float(ours), float(theirs), float(ratio)
        assert ours > 0 and theirs > 0 and float(rate) > 0 and share.strip().endswith("%")
        # The ratio of the unrounded medians: within the milliseconds' rounding (0.05).
        assert (
            (ours - 0.05) / (theirs + 0.05) - 0.005
            <= ratio
            <= (ours + 0.05) / (theirs - 0.05) + 0.005
        )
    assert "CPU cores, TensorFlow" in output and "peak: float32 matmul 256x256" in output


def test_encoders_that_differ_stop_the_bench_before_any_timing(folder, capsys, monkeypatch):
    # Left with keras-hub's tanh GELU, the two no longer compute the same function.
    monkeypatch.setattr(bench, "set_gelu", lambda backbone, approximate: None)
    assert bench.main(["--quick", "--checkpoint", str(folder)]) == 1
    output = capsys.readouterr().out
    assert "not the same function, nothing timed" in output
    assert "| length |" not in output


def test_step_flops_counts_the_matmuls_by_hand(folder):
    # L=2, D=16, N·H=16, I=32, T=8: projections 8·8·16·16 = 16384, scores and weighted sum
    # 4·16·8² = 4096, feed-forward 4·8·16·32 = 16384; per block 36864. Head 2·16·2 = 64.
    flops = bench.step_flops(read_checkpoint(folder), batch=3, length=8)
    assert flops == {"inference": 3 * 2 * 36864, "train step": 3 * (3 * 2 * 36864 + 3 * 64)}


def test_a_length_past_the_checkpoints_positions_is_refused(folder, capsys):
    with pytest.raises(SystemExit) as stopped:
        bench.main(["--checkpoint", str(folder), "--lengths", "65"])
    assert stopped.value.code == 2
    assert (
        "--lengths must be at most the checkpoint's 64 positions. Received: 65"
        in capsys.readouterr().err
    )


def test_help_runs_as_a_script():
    result = subprocess.run(
        [sys.executable, "bench/bench_pretrained_encoder.py", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "--quick" in result.stdout and "--keras-hub-gelu" in result.stdout
