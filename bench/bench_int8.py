"""A run's model quantized by Keras' `model.quantize("int8")` against float32: test
accuracy, `model.keras` size and the time to predict the test split.

Usage:
    python bench/bench_int8.py runs/rotten_tomatoes_minilm runs/reuters_r8_minilm [--rounds 3]

For each run: the saved model, and a copy quantized to int8, saved and reloaded (safe
mode), both score the run's test split through `models.predict_texts` (batches of 256 in
order of length). The two are timed in turns, `--rounds` times after a warm-up, and the
table gives the medians and their ratio. Keras quantizes the embeddings, the attention
projections, the feed-forward layers and the head. CPU-bound: run nothing else meanwhile.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="finished run folders")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of each model")
    return parser.parse_args(argv)


def saved_and_reloaded(model, path):
    from models import load_end_to_end_model

    model.save(path)
    return load_end_to_end_model(path), path.stat().st_size / 2**20


def main(argv=None):
    args = parse_args(argv)
    import numpy as np

    from models import load_end_to_end_model, predict_texts
    from run_folder import runs, saved_run

    lines = [
        "| run | test accuracy float32 % | int8 % | model.keras float32 MB | int8 MB "
        "(ratio) | test split predicted, float32 s | int8 s (ratio) |",
        "|---" * 7 + "|",
    ]
    for run_dir in args.runs:
        run = saved_run.load_run(run_dir)
        texts, labels = run.load_split("test")
        with tempfile.TemporaryDirectory() as folder:
            models = {}
            for mode in ("float32", "int8"):
                model = load_end_to_end_model(Path(run_dir) / runs.MODEL_FILE)
                if mode == "int8":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # the layers it cannot quantize
                        model.quantize("int8")
                models[mode] = saved_and_reloaded(model, Path(folder) / f"{mode}.keras")
            seconds, accuracy = {mode: [] for mode in models}, {}
            for model, _ in models.values():
                predict_texts(model, texts[:256])  # warm-up: tracing
            for _ in range(args.rounds):
                for mode, (model, _) in models.items():
                    start = time.perf_counter()
                    probabilities = predict_texts(model, texts)
                    seconds[mode].append(time.perf_counter() - start)
                    accuracy[mode] = 100 * np.mean(probabilities.argmax(-1) == labels)
        size = {mode: megabytes for mode, (_, megabytes) in models.items()}
        time_of = {mode: statistics.median(values) for mode, values in seconds.items()}
        lines.append(
            f"| {run_dir} | {accuracy['float32']:.2f} | {accuracy['int8']:.2f} "
            f"| {size['float32']:.1f} | {size['int8']:.1f} ({size['int8'] / size['float32']:.2f}x) "
            f"| {time_of['float32']:.2f} | {time_of['int8']:.2f} "
            f"({time_of['int8'] / time_of['float32']:.2f}x) |"
        )
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
