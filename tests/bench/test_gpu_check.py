"""bench/gpu_check.py on a CPU machine: its own logic (the GPU run is in the README)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.review_fixture import write_reviews_fixture

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import gpu_check  # noqa: E402


def test_without_a_gpu_it_stops_with_one_line_and_exit_2():
    result = subprocess.run([sys.executable, "bench/gpu_check.py"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stdout.strip().splitlines() == [
        "gpu_check: TensorFlow sees no GPU (check nvidia-smi and the CUDA build of "
        "tensorflow); run it on a GPU machine, or pass --allow-cpu to check the script"]
    assert result.stderr == ""


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_fused_and_explicit_paths_agree_within_the_tolerance(dtype):
    difference = gpu_check.fused_vs_explicit(dtype)
    assert 0.0 <= difference <= gpu_check.TOLERANCE[dtype]


def test_a_quick_cpu_run_prints_one_table_of_passing_checks(tmp_path):
    data_file = write_reviews_fixture(tmp_path / "reviews.csv")
    result = subprocess.run(
        [sys.executable, "bench/gpu_check.py", "--allow-cpu", "--quick",
         "--config", "configs/tiny.yaml",
         "--set", "dataset.name=null", f"dataset.train_file={data_file}"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "Devices: CPU only (--allow-cpu)"
    assert lines[1].split() == ["check", "result", "seconds", "ok"]
    checks = lines[2:]
    assert len(checks) == 5 and all(line.rstrip().endswith("yes") for line in checks)
    assert "passed" in checks[0] and "test accuracy" in checks[3]
    assert "ours/Keras: 8 train" in checks[4]
