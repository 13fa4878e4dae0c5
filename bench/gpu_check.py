"""The GPU check: what has to hold on a machine with an NVIDIA GPU, in one table.

Usage:
    python bench/gpu_check.py [--data-dir DIR] [--config FILE] [--set KEY=VALUE ...]
                              [--quick] [--allow-cpu]

Four checks, each timed, the long ones in their own subprocess:
1. layer tests: `pytest tests/layers` on the GPU (TensorFlow backend);
2. fused kernel vs explicit path: the largest difference between
   `ScaledDotProductAttention(use_fused_kernel=True)` and `False` on the same masked
   inputs, in float32 and float16 (the fused path is what runs without scores);
3. mixed precision training: `train.py --config FILE` (default `configs/default.yaml`)
   with `training.mixed_precision=true`: test accuracy and time per epoch;
4. attention benchmark: `bench/bench_attention.py`, ours / Keras at each length.

Without a GPU it stops with exit code 2, unless `--allow-cpu` (which checks this script
itself, as `tests/bench/test_gpu_check.py` does with `--quick`). The GPU machine has no
network: prepare the dataset elsewhere and pass its folder with `--data-dir`. Exit code 1
when a check fails.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine import cli  # noqa: E402
from run_folder import runs  # noqa: E402

# Largest fused-vs-explicit difference accepted, per dtype: float32 rounding, and float16
# rounding (10 bits of mantissa) of outputs up to ~4, 8 units in the last place there: the
# two paths round their float16 intermediates differently by CPU (up to 8.8e-3 over seeds
# 0-3 on an AMD EPYC; seed 0 stayed under 2e-3 on earlier machines). A wrong mask moves
# outputs by 0.1 or more.
TOLERANCE = {"float32": 1e-5, "float16": 1.6e-2}
BENCH_ROW = re.compile(r"^\| *(\d+) \| ([^|]+?) \| *[\d.]+ \| *[\d.]+ \| *([\d.]+) \|$")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", help="TFDS data folder with the prepared dataset")
    parser.add_argument("--config", default=str(ROOT / "configs" / "default.yaml"))
    parser.add_argument(
        "--set",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="overrides of the training run's config",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a few layer tests, a short benchmark: checks the script itself",
    )
    parser.add_argument("--allow-cpu", action="store_true", help="run without a GPU")
    return parser.parse_args(argv)


def run(command):
    """(return code, combined output, seconds) of a subprocess run from the checkout."""
    start = time.perf_counter()
    completed = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return completed.returncode, completed.stdout + completed.stderr, time.perf_counter() - start


def last_line(output):
    lines = output.strip().splitlines()
    return lines[-1] if lines else "(no output)"


def check_layer_tests(quick):
    selection = (
        ["tests/layers/test_scaled_dot_product_attention.py", "-k", "toy"]
        if quick
        else ["tests/layers"]
    )
    code, output, seconds = run([sys.executable, "-m", "pytest", "-q", *selection])
    summary = re.findall(r"^=*\s*(\d+ passed.*?)(?: in [\d.]+s.*)?$", output, re.MULTILINE)
    return [("layer tests", summary[-1] if summary else last_line(output), seconds, code == 0)]


def fused_vs_explicit(dtype, seed=0):
    """Largest |fused - explicit| of one masked multi-head attention, in `dtype`."""
    import numpy as np
    from keras import ops

    from layers import ScaledDotProductAttention

    rng = np.random.default_rng(seed)
    query, key, value = (rng.normal(size=(4, 64, 4, 32)).astype(dtype) for _ in range(3))
    mask = rng.random((4, 1, 64, 64)) > 0.2
    mask[..., 0] = True
    outputs = [
        ops.convert_to_numpy(
            ScaledDotProductAttention(use_fused_kernel=fused, dtype=dtype)(
                query, key, value, attention_mask=mask
            )
        ).astype("float64")
        for fused in (True, False)
    ]
    return float(np.abs(outputs[0] - outputs[1]).max())


def check_fused_kernel():
    rows = []
    for dtype, tolerance in TOLERANCE.items():
        start = time.perf_counter()
        difference = fused_vs_explicit(dtype)
        rows.append(
            (
                f"fused vs explicit ({dtype})",
                f"max |difference| {difference:.1e}",
                time.perf_counter() - start,
                difference <= tolerance,
            )
        )
    return rows


def check_mixed_precision_training(args, output_root):
    overrides = [
        "training.mixed_precision=true",
        f"output.root={output_root}",
        "output.name=gpu_check",
        *args.set,
    ]
    if args.data_dir:
        overrides.append(f"dataset.data_dir={args.data_dir}")
    code, output, seconds = run(
        [sys.executable, "train.py", "--config", args.config, "--set", *overrides]
    )
    if code != 0:
        return [("mixed_float16 training", last_line(output), seconds, False)]
    metrics = json.loads((Path(output_root) / "gpu_check" / runs.METRICS_FILE).read_text())
    result = (
        f"test accuracy {100 * metrics['test']['accuracy']:.2f}%, {metrics['epochs']} "
        f"epochs, {metrics['wall_time_s'] / metrics['epochs']:.1f} s/epoch"
    )
    return [("mixed_float16 training", result, seconds, True)]


def check_attention_benchmark(quick):
    options = ["--lengths", "8", "--repeats", "10", "--no-memory"] if quick else []
    code, output, seconds = run([sys.executable, "bench/bench_attention.py", *options])
    ratios = [
        f"{length} {mode.split(' ')[0]} {ratio}"
        for length, mode, ratio in (
            match.groups() for match in map(BENCH_ROW.match, output.splitlines()) if match
        )
    ]
    result = "ours/Keras: " + ", ".join(ratios) if ratios else last_line(output)
    return [("attention benchmark", result, seconds, code == 0 and bool(ratios))]


def gpu_names():
    import tensorflow as tf

    return [device.name for device in tf.config.list_logical_devices("GPU")]


def main(argv=None):
    args = parse_args(argv)
    cli.start_tensorflow()
    gpus = gpu_names()
    if not gpus and not args.allow_cpu:
        print(
            "gpu_check: TensorFlow sees no GPU (check nvidia-smi and the CUDA build of "
            "tensorflow); run it on a GPU machine, or pass --allow-cpu to check the script"
        )
        return 2
    import pandas as pd

    print(f"Devices: {', '.join(gpus) if gpus else 'CPU only (--allow-cpu)'}")
    with tempfile.TemporaryDirectory() as output_root:
        rows = (
            check_layer_tests(args.quick)
            + check_fused_kernel()
            + check_mixed_precision_training(args, output_root)
            + check_attention_benchmark(args.quick)
        )
    table = pd.DataFrame(rows, columns=["check", "result", "seconds", "ok"])
    table["seconds"] = table["seconds"].round(1)
    table["ok"] = table["ok"].map({True: "yes", False: "NO"})
    print(table.to_string(index=False))
    return 0 if (table["ok"] == "yes").all() else 1


if __name__ == "__main__":
    sys.exit(main())
