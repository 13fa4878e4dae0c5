"""Training only the top K blocks of MiniLM (the rest computed once) against the full fine-tune.

Usage:
    python bench/bench_trainable_blocks.py --datasets rotten_tomatoes --blocks 2 3 4 all \
        --seeds 0 1 2 [--set training.epochs=2 --tag _e2] [--reuse]

For each dataset, `configs/<dataset>_minilm.yaml` is trained with `model.fine_tune:
{kind: top_blocks, blocks: K}` for each K of `--blocks` ("all": the recipe as it is,
every block fine-tuned), with each seed, one run at a time, in the same bench run: same
splits, epoch budget and early stopping (the recipe's, or `--set` for all rows). The
table gives the first and later epochs' training seconds (the first includes computing
the frozen blocks' states), the wall time of a run (data, training, evaluation, saving)
and test accuracy, mean ± sd over seeds. Runs go to
bench/results/runs/<dataset>_minilm_k<K>_seed<S>/; the table to
bench/results/trainable_blocks.md. CPU-bound: run nothing else meanwhile.
"""

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from run_folder import runs  # noqa: E402

RESULTS = ROOT / "bench" / "results"
TIMES_FILE = "epoch_seconds.json"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["rotten_tomatoes"])
    parser.add_argument(
        "--blocks",
        nargs="+",
        default=["2", "3", "4", "all"],
        help="values of model.fine_tune.blocks (kind top_blocks); all: every block trains",
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument(
        "--set",
        nargs="*",
        default=[],
        dest="overrides",
        help="overrides for every run (e.g. training.epochs=2)",
    )
    parser.add_argument(
        "--tag", default="", help="added to the run names, so runs with other --set stay apart"
    )
    parser.add_argument("--reuse", action="store_true", help="reuse finished runs")
    return parser.parse_args(argv)


def one_run(dataset, blocks, seed, overrides, reuse, tag=""):
    """{test_accuracy, wall_time_s, epoch_seconds, epochs} of one run."""
    from train_cost import epoch_timer

    from config.files import load_config
    from train import run_training

    name = f"{dataset}_minilm_k{blocks}{tag}_seed{seed}"
    run_dir = RESULTS / "runs" / name
    if reuse and (run_dir / TIMES_FILE).exists():
        metrics = json.loads((run_dir / runs.METRICS_FILE).read_text())
        seconds = json.loads((run_dir / TIMES_FILE).read_text())
    else:
        settings = [
            f"output.root={RESULTS / 'runs'}",
            f"output.name={name}",
            f"training.seed={seed}",
            *overrides,
        ]
        if blocks != "all":
            settings.append(f"model.fine_tune={{kind: top_blocks, blocks: {blocks}}}")
        config = load_config(ROOT / "configs" / f"{dataset}_minilm.yaml", settings)
        print(f"\n=== {name} ===", flush=True)
        timer = epoch_timer()
        metrics = run_training(config, overwrite=True, callbacks=[timer]).metrics
        seconds = [round(value, 1) for value in timer.seconds]
        (run_dir / TIMES_FILE).write_text(json.dumps(seconds) + "\n")
    return {
        "test_accuracy": 100 * metrics["test"]["accuracy"],
        "validation_accuracy": 100 * metrics["validation"]["accuracy"],
        "wall_time_s": metrics["wall_time_s"],
        "epoch_seconds": seconds,
        "epochs": metrics["epochs"],
        "num_parameters": metrics["num_parameters"],
    }


def mean_sd(values, digits=2):
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.mean(values):.{digits}f} ± {statistics.stdev(values):.{digits}f}"


def main(argv=None):
    args = parse_args(argv)
    lines = [
        "| dataset | trained blocks | first epoch s | later epochs s | wall time / run s "
        "| epochs | validation accuracy % | test accuracy % |",
        "|---" * 8 + "|",
    ]
    for dataset in args.datasets:
        for blocks in args.blocks:
            runs = [
                one_run(dataset, blocks, seed, args.overrides, args.reuse, args.tag)
                for seed in args.seeds
            ]
            later = [s for run in runs for s in run["epoch_seconds"][1:]]
            lines.append(
                f"| {dataset} | {blocks} | {mean_sd([r['epoch_seconds'][0] for r in runs], 0)}"
                f" | {mean_sd(later, 0) if later else '–'} "
                f"| {mean_sd([r['wall_time_s'] for r in runs], 0)} "
                f"| {'/'.join(str(r['epochs']) for r in runs)} "
                f"| {mean_sd([r['validation_accuracy'] for r in runs])} "
                f"| {mean_sd([r['test_accuracy'] for r in runs])} |"
            )
            print("\n".join(lines), flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "trainable_blocks.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
