"""Calibration on every built-in dataset and own-file bench file: ECE before and after the
temperature train.py fits on validation; prints the table.

Usage:
    python bench/bench_calibration.py                      # every set, seed 0, ~25 min
    python bench/bench_calibration.py --sets rotten_tomatoes reviews --reuse

Each set trains as a user trains it, `train.py` in its own process: a built-in dataset
with its recipe (configs/NAME.yaml), an own-file bench file (bench/own_file_data.py: 5,000
texts, its config only `dataset: train_file:`, so MiniLM by default). The temperature and
the ECE before and after it on validation and test come from the run's metrics.json
(train.py computes the "before" from the unscaled model's probabilities); then
`evaluate.py` scores the test split with the saved model itself, and its ECE (15 bins,
top label), Brier score and the accuracy at 90% coverage are the ones the goal reads:
test ECE at most GOAL_ECE from the saved model, accuracy unchanged (the temperature
changes no prediction). Beside it, the negative control: the ECE a perfectly calibrated
model with the same confidences would show on as many texts (`ece_if_calibrated`, its
mean and 95th percentile over labels drawn from the probabilities): binned ECE is never 0
on a finite sample, and an ECE under that percentile says nothing against the model. Runs
go to OUT/calibration/runs/, the table to
OUT/calibration.md and .json. It is CPU-bound: run nothing else meanwhile.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from own_file_data import FILES, user_file  # noqa: E402

from run_folder import runs  # noqa: E402

RESULTS = ROOT / "bench" / "results"
BUILT_IN = ("reuters_r8", "reuters_r52", "twenty_newsgroups", "rotten_tomatoes", "bbc_news")
GOAL_ECE = 0.03
OWN_FILE_ROWS = 5000


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=BUILT_IN + tuple(FILES),
                        default=list(BUILT_IN + tuple(FILES)))  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--data-dir", default=None, help="the TFDS folder (default: TFDS')")
    parser.add_argument("--rows", type=int, default=OWN_FILE_ROWS, help="own-file texts")
    parser.add_argument("--recipe", nargs="+", default=[], metavar="SECTION.FIELD=VALUE",
                        help="overrides added to every train.py run (default: none)")  # fmt: skip
    parser.add_argument("--reuse", action="store_true", help="keep finished runs")
    return parser.parse_args(argv)


def config_of(name, args) -> Path:
    """A built-in dataset's recipe, or a config naming only the own-file bench file."""
    if name in BUILT_IN:
        return ROOT / "configs" / f"{name}.yaml"
    folder = args.out / "calibration" / "files"
    path, _ = user_file(name, args.rows, folder, args.data_dir)
    config = folder / f"{name}.yaml"
    config.write_text(f"dataset:\n  train_file: {path}\n")
    return config


def run(command):
    print(f"\n$ {shlex.join(map(str, command))}", flush=True)
    subprocess.run([str(part) for part in command], cwd=ROOT, check=True)


def measure(name, args) -> dict:
    """Trains (unless reused) and evaluates the set's run; its row."""
    root = args.out / "calibration" / "runs"
    run_dir = root / name
    if not (args.reuse and (run_dir / runs.METRICS_FILE).is_file()):
        run([sys.executable, ROOT / "train.py", "--config", config_of(name, args), "--overwrite",
             "--set", f"output.root={root}", f"output.name={name}",
             f"training.seed={args.seed}", *args.recipe])  # fmt: skip
    run([sys.executable, ROOT / "evaluate.py", run_dir])  # the saved model's own ECE
    metrics = json.loads((run_dir / runs.METRICS_FILE).read_text())
    evaluated = json.loads((run_dir / runs.EVAL_DIR / "test" / runs.METRICS_FILE).read_text())
    calibration = metrics["calibration"]
    return {
        "set": name,
        "temperature": calibration["temperature"],
        "test_accuracy": metrics["test"]["accuracy"],
        "evaluated_accuracy": evaluated["accuracy"],
        "validation_ece_before": calibration["validation"]["ece_before"],
        "validation_ece_after": calibration["validation"]["ece_after"],
        "test_ece_before": calibration["test"]["ece_before"],
        "test_ece_after": calibration["test"]["ece_after"],
        "saved_model_test_ece": evaluated["ece"],
        "ece_if_calibrated": evaluated["ece_if_calibrated"],
        "ece_if_calibrated_p95": evaluated["ece_if_calibrated_p95"],
        "brier": evaluated["brier"],
        "accuracy_at_90_coverage": evaluated["accuracy_at_90_coverage"],
        "goal_met": evaluated["ece"] <= GOAL_ECE,
        # The negative control: as small as a calibrated model's on these many texts?
        "within_noise": evaluated["ece"] <= evaluated["ece_if_calibrated_p95"],
    }


def format_table(rows) -> str:
    lines = [
        "| set | T | test accuracy % | validation ECE before → after | test ECE before → "
        "after | saved model's test ECE | a calibrated model's ECE on these texts, mean "
        "[95th pct] | within it | Brier | accuracy at 90% coverage % | goal met |",
        "|---|---:|---:|---|---|---:|---|---|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['set']} | {row['temperature']:.3f} | {100 * row['test_accuracy']:.2f} | "
            f"{row['validation_ece_before']:.4f} → {row['validation_ece_after']:.4f} | "
            f"{row['test_ece_before']:.4f} → {row['test_ece_after']:.4f} | "
            f"{row['saved_model_test_ece']:.4f} | {row['ece_if_calibrated']:.4f} "
            f"[{row['ece_if_calibrated_p95']:.4f}] | {'yes' if row['within_noise'] else 'no'} | "
            f"{row['brier']:.4f} | "
            f"{100 * row['accuracy_at_90_coverage']:.2f} | "
            f"{'yes' if row['goal_met'] else 'no'} |"
        )
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    rows = [measure(name, args) for name in args.sets]
    for row in rows:  # the temperature changes no prediction
        assert abs(row["test_accuracy"] - row["evaluated_accuracy"]) < 1e-9, row
    table = format_table(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "calibration.md").write_text(table + "\n")
    (args.out / "calibration.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(table)


if __name__ == "__main__":
    main()
