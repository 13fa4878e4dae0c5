"""bench/gpu_check.py on a CPU machine: its own logic (the GPU run: docs/training.md#gpu)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import gpu_check  # noqa: E402


def test_without_a_gpu_it_stops_with_one_line_and_exit_2():
    result = subprocess.run(
        [sys.executable, "bench/gpu_check.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout.strip().splitlines() == [
        "gpu_check: TensorFlow sees no GPU (check nvidia-smi and the CUDA build of "
        "tensorflow); run it on a GPU machine, or pass --allow-cpu to check the script"
    ]
    assert result.stderr == ""


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_and_explicit_paths_agree_within_the_tolerance(dtype):
    difference = gpu_check.fused_vs_explicit(dtype)
    assert 0.0 <= difference <= gpu_check.TOLERANCE[dtype]


def fake_run(command):
    """Stands in for the subprocesses: what pytest, train.py and the benchmark print."""
    script = command[1] if command[1] != "-m" else command[2]
    if script == "pytest":
        return 0, "....\n160 passed, 5 warnings in 40.61s\n", 40.6
    if script == "train.py":
        root = next(arg.split("=", 1)[1] for arg in command if arg.startswith("output.root="))
        run_dir = Path(root) / "gpu_check"
        run_dir.mkdir(parents=True)
        (run_dir / "metrics.json").write_text(
            json.dumps({"test": {"accuracy": 0.7358}, "epochs": 6, "wall_time_s": 30.0})
        )
        return 0, "", 31.0
    table = (
        "| length | mode | ours (ms) | Keras (ms) | ours / Keras |\n"
        "|---:|---|---:|---:|---:|\n"
        "| 64 | train (forward + backward) | 36.5 | 49.9 | 0.73 |\n"
        "| 64 | inference | 10.0 | 12.4 | 0.80 |\n"
    )
    return 0, table, 12.0


def test_the_table_reads_every_check(monkeypatch, capsys):
    monkeypatch.setattr(gpu_check, "run", fake_run)
    assert gpu_check.main(["--allow-cpu"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "Devices: CPU only (--allow-cpu)"
    assert lines[1].split() == ["check", "result", "seconds", "ok"]
    rows = [line.split() for line in lines[2:]]
    assert len(rows) == 5 and all(row[-1] == "yes" for row in rows)
    assert lines[2].split()[:4] == ["layer", "tests", "160", "passed,"]
    assert "test accuracy 73.58%, 6 epochs, 5.0 s/epoch" in lines[5]
    assert "ours/Keras: 64 train 0.73, 64 inference 0.80" in lines[6]


def test_a_failing_check_is_no_and_exit_1(monkeypatch, capsys):
    def failing(command):
        if "train.py" in command:
            return 2, "train.py: error: dataset.name: no dataset given\n", 1.0
        return fake_run(command)

    monkeypatch.setattr(gpu_check, "run", failing)
    assert gpu_check.main(["--allow-cpu"]) == 1
    row = next(
        line
        for line in capsys.readouterr().out.splitlines()
        if line.strip().startswith("mixed_float16")
    )
    assert "train.py: error: dataset.name: no dataset given" in row and row.endswith("NO")
