"""Pruning attention heads: accuracy, speed and size against the fraction of heads removed.

Usage (each RUN a finished run folder; docs/benchmarks.md gives the train.py commands):
    python bench/bench_heads.py runs/rotten_tomatoes_minilm runs/reuters_r8_minilm \
        runs/reuters_r8 [--fractions 0.1 0.2 0.25 0.3 0.4 0.5] [--random-orders 3]

For each run: `evaluate.py RUN --split validation --heads 500` (timed; skipped when the
run already has eval/validation/heads.json), then for each fraction the heads are pruned
(`compress.py`'s choice: every block keeps one) in importance order and in
`--random-orders` random orders (seeds 0, 1, ...), and each pruned model scores the whole
validation and test splits. The table gives accuracies, the importance order's lead over
the random orders' mean with a 95% paired bootstrap interval over the examples, the
inference speed-up of the importance-pruned model (its encoder blocks on batch 32 of
`--lengths` tokens, random inputs, pruned and full interleaved, medians of `--rounds`) and
its `model.keras` size. The importance order was measured on the first 500 validation
examples: validation accuracies are not independent of it, test accuracies are.
Results: bench/results/heads/<run>.json; the curves: docs/heads_pruning.png.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import compress  # noqa: E402
from engine.evaluation.heads import HEADS_FILE  # noqa: E402
from inspection.methods.bootstrap import paired_bootstrap  # noqa: E402
from models import predict_batches  # noqa: E402
from models.pruning import pruned_classifier  # noqa: E402
from run_folder import runs, saved_run  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "heads"
PLOT = ROOT / "docs" / "heads_pruning.png"
BATCH = 32


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", nargs="+", type=Path)
    parser.add_argument(
        "--fractions", type=float, nargs="+", default=[0.1, 0.2, 0.25, 0.3, 0.4, 0.5]
    )
    parser.add_argument("--random-orders", type=int, default=3)
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    return parser.parse_args(argv)


def heads_seconds(run_dir):
    """Wall seconds of `evaluate.py RUN --heads 500` (None: heads.json was there)."""
    if (run_dir / runs.EVAL_DIR / compress.HEADS_SPLIT / HEADS_FILE).is_file():
        return None
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            str(run_dir),
            "--split",
            compress.HEADS_SPLIT,
            "--heads",
            str(compress.HEADS_EXAMPLES),
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return round(time.perf_counter() - start, 1)


def correct(classifier, pipelines):
    """{split: bool (N,) whether each example is right} on validation and test."""
    results = predict_batches(classifier, pipelines["validation"], pipelines["test"])
    return {
        split: probabilities.argmax(-1) == labels
        for split, (probabilities, labels) in zip(("validation", "test"), results)
    }


def lead_interval(importance, randoms, resamples, seed=0):
    """95% paired bootstrap interval (points) of accuracy(importance) - mean(randoms): the
    resampled mean of the random orders' accuracies is that of their per-example mean."""
    random_mean = np.mean(np.asarray(randoms, dtype=np.float64), axis=0)  # (N,)
    _, difference = paired_bootstrap(
        {"importance": importance, "random": random_mean}, resamples=resamples, seed=seed
    )
    return [round(100 * value, 2) for value in difference("importance", "random")["ci95"]]


def blocks_forward(classifier):
    """A tf.function running the encoder blocks on (B, T, D) vectors, all tokens real."""
    blocks = classifier.encoder.blocks

    @tf.function(jit_compile=False)
    def forward(x):
        mask = tf.ones(tf.shape(x)[:2], tf.bool)
        for block in blocks:
            x = block(x, padding_mask=mask, training=False)
        return x

    return forward


def speedups(full, pruned, lengths, rounds):
    """{length: (full ms, pruned ms, full / pruned)}, interleaved medians."""
    result = {}
    d_model = full.encoder.d_model
    for length in lengths:
        x = tf.constant(np.random.default_rng(0).normal(size=(BATCH, length, d_model)), tf.float32)
        steps = [blocks_forward(full), blocks_forward(pruned)]
        times = [[], []]
        for step in steps:
            step(x).numpy()  # Traced and warmed outside the timing.
        for index in range(rounds):
            for which in (0, 1) if index % 2 == 0 else (1, 0):
                start = time.perf_counter()
                steps[which](x).numpy()
                times[which].append(1000 * (time.perf_counter() - start))
        full_ms, pruned_ms = (statistics.median(values) for values in times)
        result[length] = (round(full_ms, 1), round(pruned_ms, 1), round(full_ms / pruned_ms, 2))
    return result


def bench_run(run_dir, args):
    """The run's results (see the module docstring), also written to RESULTS/<run>.json."""
    seconds = heads_seconds(run_dir)
    run = saved_run.load_run(run_dir)
    _, classifier = run.parts
    counts = classifier.encoder.head_counts
    pipelines = run.pipelines()
    orders = {"importance": compress.pruning_order(run, "importance", 0)}
    for seed in range(args.random_orders):
        orders[f"random{seed}"] = compress.pruning_order(run, "random", seed)
    heads = json.loads((run_dir / runs.EVAL_DIR / compress.HEADS_SPLIT / HEADS_FILE).read_text())
    full = correct(classifier, pipelines)
    rows = [
        {
            "fraction": 0.0,
            "pruned": 0,
            **{
                f"{split}_{name}": round(100 * full[split].mean(), 2)
                for split in full
                for name in orders
            },
        }
    ]
    with tempfile.TemporaryDirectory() as scratch:
        full_size = (run_dir / runs.MODEL_FILE).stat().st_size
        for fraction in args.fractions:
            count = compress.heads_to_prune(fraction, sum(counts))
            row = {"fraction": fraction, "pruned": count}
            scores = {}
            for name, order in orders.items():
                pruned = pruned_classifier(classifier, compress.choose(order, count, counts))
                scores[name] = correct(pruned, pipelines)
                for split, right in scores[name].items():
                    row[f"{split}_{name}"] = round(100 * right.mean(), 2)
                if name == "importance":
                    timing = speedups(classifier, pruned, args.lengths, args.rounds)
                    row["speedup"] = {str(length): value for length, value in timing.items()}
                    target = Path(scratch) / f"pruned_{fraction}"
                    compress.compress(run, target, count)
                    row["size_ratio"] = round(
                        (target / runs.MODEL_FILE).stat().st_size / full_size, 3
                    )
            for split in ("validation", "test"):
                row[f"{split}_lead_interval"] = lead_interval(
                    scores["importance"][split],
                    [scores[name][split] for name in orders if name != "importance"],
                    args.resamples,
                )
            rows.append(row)
            print(json.dumps(row), flush=True)
    result = {
        "run": run_dir.name,
        "heads": sum(counts),
        "heads_seconds": seconds,
        "spearman_importance_ablation": heads["spearman_importance_ablation"],
        "model_mb": round(full_size / 1e6, 1),
        "random_orders": args.random_orders,
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    runs.write_json(RESULTS / f"{run_dir.name}.json", result)
    return result


def table(result):
    """A markdown table of one run's results."""
    randoms = [f"random{seed}" for seed in range(result["random_orders"])]
    lengths = list(result["rows"][1]["speedup"]) if len(result["rows"]) > 1 else []
    lines = [
        "| pruned | val importance | val random | lead (95% CI) | test importance | "
        "test random | lead (95% CI) | "
        + " | ".join(f"speed-up {n}" for n in lengths)
        + " | size |",
        "|---" * (7 + len(lengths) + 1) + "|",
    ]
    for row in result["rows"]:
        cells = [f"{row['pruned']} ({100 * row['fraction']:.0f}%)"]
        for split in ("validation", "test"):
            values = [row[f"{split}_{name}"] for name in randoms]
            interval = row.get(f"{split}_lead_interval")
            cells += [
                f"{row[f'{split}_importance']:.2f}",
                f"{statistics.mean(values):.2f} ± {statistics.pstdev(values):.2f}",
                f"{row[f'{split}_importance'] - statistics.mean(values):+.2f} "
                f"[{interval[0]:+.2f}, {interval[1]:+.2f}]"
                if interval
                else "–",
            ]
        cells += [f"{row['speedup'][n][2]:.2f}x" if "speedup" in row else "1.00x" for n in lengths]
        cells.append(f"{row.get('size_ratio', 1.0):.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.4), squeeze=False)
    for axis, result in zip(axes[0], results):
        rows = result["rows"]
        percent = [100 * row["fraction"] for row in rows]
        randoms = [f"random{seed}" for seed in range(result["random_orders"])]
        for split, style in (("validation", "-"), ("test", "--")):
            axis.plot(
                percent,
                [row[f"{split}_importance"] for row in rows],
                style,
                color="tab:orange",
                marker="o",
                label=f"importance, {split}",
            )
            values = np.array([[row[f"{split}_{name}"] for name in randoms] for row in rows])
            axis.plot(
                percent,
                values.mean(axis=1),
                style,
                color="tab:blue",
                marker="s",
                label=f"random (mean of {len(randoms)}), {split}",
            )
            axis.fill_between(
                percent, values.min(axis=1), values.max(axis=1), color="tab:blue", alpha=0.12
            )
        axis.set(
            title=f"{result['run']} ({result['heads']} heads)",
            xlabel="heads pruned (%)",
            ylabel="accuracy (%)",
        )
        axis.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main(argv=None):
    args = parse_args(argv)
    results = []
    for run_dir in args.run_dirs:
        results.append(bench_run(run_dir, args))
        result = results[-1]
        print(
            f"\n#### {result['run']} ({result['heads']} heads, model.keras "
            f"{result['model_mb']} MB; Spearman(importance, ablation) "
            f"{result['spearman_importance_ablation']:.2f}; evaluate.py --heads 500: "
            f"{result['heads_seconds']} s)\n\n{table(result)}\n",
            flush=True,
        )
    plot(results, PLOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
