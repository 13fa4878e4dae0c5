"""Data that outgrows memory: peak memory, seconds to the first training step and
steady-state rows per second, in memory and streamed, on synthetic CSV and Parquet inputs.

Usage:
    python bench/bench_scale.py                    # 100k, 1M and 10M rows, CSV and Parquet
    python bench/bench_scale.py --rows 1000000 --formats parquet --repeats 3
    python bench/bench_scale.py --quick            # 2,000 and 20,000 rows: checks the script

The inputs are written once into bench/results/scale_data/ (1M rows a shard; 10M rows are
about 1 GB of CSV) and reused. Each measurement is one process (so peak RSS is its own)
that trains configs/tiny.yaml (batch 64, cap 32) through train.py's load_data and
build_model for a fixed number of steps; the in-memory and the streaming paths alternate,
and repeats give medians. "First step" is from the start of load_data (TensorFlow already
imported) to the end of the first training step; rows per second are those of the steps
after the warm-up. Results go to bench/results/scale.json. The goals of issue 28 follow
the table: at the largest size the stream's peak memory under 3 GB and its first step
within 60 s; at the size below, its throughput within 10% of in memory; its peak memory
flat (within 25%) between the two.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from scale_data import write_dataset  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "scale.json"
FULL_ROWS, QUICK_ROWS = (100_000, 1_000_000, 10_000_000), (2_000, 20_000)
PATHS = ("memory", "stream")
# Issue 28's goals.
MEMORY_GOAL_GB, FIRST_STEP_GOAL_S, THROUGHPUT_GOAL, FLAT_GOAL = 3.0, 60.0, 0.9, 1.25


def measure(spec: str, path: str, steps: int, warmup: int, batch_size: int) -> dict:
    """One measurement, in this process: train `steps` steps on `spec` by `path`."""
    import keras

    import train
    from config.files import load_config
    from engine.training.distribution import make_strategy

    config = load_config(
        ROOT / "configs" / "tiny.yaml",
        [
            "dataset.name=null",
            f"dataset.train_file={spec}",
            f"dataset.streaming={'true' if path == 'stream' else 'false'}",
            f"training.batch_size={batch_size}",
            "training.epochs=1",
            f"training.steps_per_epoch={steps}",
            "text.sequence_length=32",
            "text.vocabulary_size=20000",
        ],
    )

    class StepTimes(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.ends = []

        def on_train_batch_end(self, batch, logs=None):
            self.ends.append(time.perf_counter())

    strategy = make_strategy(config.training)
    start = time.perf_counter()
    data, pipelines, steps = train.load_data(config)
    _, trainer = train.build_model(config, data, strategy, steps)
    timer = StepTimes()
    trainer.fit(
        pipelines["train"],
        epochs=1,
        steps_per_epoch=steps,
        callbacks=[timer],
        verbose=0,
        shuffle=False,
    )
    ends = timer.ends
    return {
        "first_step_s": ends[0] - start,
        "rows_per_s": batch_size * (len(ends) - warmup) / (ends[-1] - ends[warmup - 1]),
        # ru_maxrss is in KiB on Linux.
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9,
    }


def run_measurement(spec, path, steps, warmup, batch_size, timeout) -> dict:
    """`measure` in a fresh process: its own peak RSS. A failed one gives its error."""
    command = [
        sys.executable,
        __file__,
        "--measure",
        spec,
        path,
        str(steps),
        str(warmup),
        str(batch_size),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env
        )
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout} s"}
    lines = result.stdout.strip().splitlines()
    if result.returncode or not lines:
        last = (result.stderr.strip().splitlines() or [f"exit {result.returncode}"])[-1]
        return {"error": f"exit {result.returncode}: {last[:160]}"}
    return json.loads(lines[-1])


def summarize(results: list[dict]) -> dict:
    """{(rows, format, path): medians of each measure, runs, errors} of the raw results."""
    groups = {}
    for result in results:
        groups.setdefault((result["rows"], result["format"], result["path"]), []).append(result)
    summary = {}
    for key, group in sorted(groups.items()):
        good = [result for result in group if "error" not in result]
        summary[key] = {
            name: statistics.median(result[name] for result in good) if good else None
            for name in ("peak_rss_gb", "first_step_s", "rows_per_s")
        }
        summary[key]["runs"] = len(good)
        summary[key]["errors"] = [result["error"] for result in group if "error" in result]
    return summary


def goals(summary: dict, rows: list[int], formats: list[str]) -> list[tuple[str, str, bool]]:
    """(goal, what was measured, met) for each format; a missing measurement is not met."""
    largest, below = max(rows), sorted(rows)[-2] if len(rows) > 1 else None
    lines = []

    def value(size, file_format, path, name):
        return summary.get((size, file_format, path), {}).get(name)

    for file_format in formats:
        peak = value(largest, file_format, "stream", "peak_rss_gb")
        first = value(largest, file_format, "stream", "first_step_s")
        lines.append(
            (
                f"{file_format}, {largest:,} rows streamed: peak memory under "
                f"{MEMORY_GOAL_GB:g} GB",
                _show(peak, "{:.2f} GB"),
                peak is not None and peak < MEMORY_GOAL_GB,
            )
        )
        lines.append(
            (
                f"{file_format}, {largest:,} rows streamed: first step within "
                f"{FIRST_STEP_GOAL_S:g} s",
                _show(first, "{:.1f} s"),
                first is not None and first <= FIRST_STEP_GOAL_S,
            )
        )
        if below is None:
            continue
        streamed = value(below, file_format, "stream", "rows_per_s")
        in_memory = value(below, file_format, "memory", "rows_per_s")
        ratio = streamed / in_memory if streamed and in_memory else None
        lines.append(
            (
                f"{file_format}, {below:,} rows: streamed throughput within "
                f"{1 - THROUGHPUT_GOAL:.0%} of in memory",
                _show(ratio, "{:.2f}x"),
                ratio is not None and ratio >= THROUGHPUT_GOAL,
            )
        )
        small = value(below, file_format, "stream", "peak_rss_gb")
        growth = peak / small if peak and small else None
        lines.append(
            (
                f"{file_format}: streamed peak memory flat from {below:,} to "
                f"{largest:,} rows (within {FLAT_GOAL - 1:.0%})",
                _show(growth, "{:.2f}x"),
                growth is not None and growth <= FLAT_GOAL,
            )
        )
    return lines


def _show(number, pattern):
    return "not measured" if number is None else pattern.format(number)


def format_table(summary: dict) -> str:
    """The summary as one row per rows x format, the two paths side by side."""
    header = (
        "| rows | format | peak GB memory / stream | first step s memory / stream "
        "| rows/s memory / stream |"
    )
    lines = [header, "|---|---|---|---|---|"]
    for size, file_format in sorted({(key[0], key[1]) for key in summary}):
        cells = []
        for name, pattern in (
            ("peak_rss_gb", "{:.2f}"),
            ("first_step_s", "{:.1f}"),
            ("rows_per_s", "{:,.0f}"),
        ):
            pair = [
                summary[size, file_format, path][name]
                if (size, file_format, path) in summary
                else "-"
                for path in PATHS
            ]
            cells.append(
                " / ".join(
                    "failed"
                    if number is None
                    else number
                    if number == "-"
                    else pattern.format(number)
                    for number in pair
                )
            )
        lines.append(f"| {size:,} | {file_format} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=list(FULL_ROWS))
    parser.add_argument(
        "--formats", nargs="+", choices=("csv", "parquet"), default=["csv", "parquet"]
    )
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=50, help="steps left out of rows/s")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per measurement")
    parser.add_argument(
        "--memory-max-rows",
        type=int,
        metavar="N",
        help="measure the in-memory path only up to N rows (it needs about "
        "0.9 KB and 90 us a row: 9 GB and 15 min at 10M); '-' in the "
        "table above",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="2,000 and 20,000 rows, 12 steps: checks the script, not the goals",
    )
    parser.add_argument("--measure", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:  # The child: one measurement, printed as the last line.
        spec, path, steps, warmup, batch_size = args.measure
        print(json.dumps(measure(spec, path, int(steps), int(warmup), int(batch_size))))
        return 0
    if args.quick:
        args.rows, args.steps, args.warmup = list(QUICK_ROWS), 12, 4
    specs = {
        (rows, file_format): write_dataset(rows, file_format)
        for rows in args.rows
        for file_format in args.formats
    }
    results = []
    for repeat in range(args.repeats):
        for rows in args.rows:
            for file_format in args.formats:
                # Alternate which path goes first, so neither always meets a warmer cache.
                for path in PATHS if repeat % 2 == 0 else PATHS[::-1]:
                    if path == "memory" and rows > (args.memory_max_rows or rows):
                        continue
                    result = run_measurement(
                        specs[rows, file_format],
                        path,
                        args.steps,
                        args.warmup,
                        args.batch_size,
                        args.timeout,
                    )
                    results.append({"rows": rows, "format": file_format, "path": path, **result})
                    print(f"{rows:>10,} {file_format:8} {path:7} {result}", flush=True)
    summary = summarize(results)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print()
    print(format_table(summary))
    print()
    for goal, measured, met in goals(summary, args.rows, args.formats):
        print(f"{'met' if met else 'NOT met':8} {goal}: {measured}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
