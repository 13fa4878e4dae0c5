"""LoRA on MiniLM's attention (`model.fine_tune: lora`) against the full fine-tune, in one run.

Usage:
    python bench/bench_lora.py --dataset rotten_tomatoes --ranks 8 \
        --learning-rates 1e-4 1e-3 3e-3 --seeds 0 [--set training.epochs=6 --tag _e6] [--reuse]

`configs/<dataset>_minilm.yaml` is trained as it is (every weight fine-tuned), then with
LoRA of each rank on the query and value projections (`model.fine_tune.targets`' default) and
each learning rate, with each seed, one run at a time: same splits, epoch budget and early
stopping (the recipe's). The table gives validation and test accuracy (mean ± sd over
seeds), the training seconds of the epochs after the first (the first includes tracing)
and their ratio to the full fine-tune's, the weights that train, the adapter file's size,
and the wall time of a run. Runs go to bench/results/runs/<dataset>_minilm_kall<tag>_seed<S>/
(bench_trainable_blocks.py's names); the table to bench/results/lora.md. CPU-bound: run
nothing else meanwhile.
"""

import argparse
import statistics
import sys
from pathlib import Path

import h5py
from bench_trainable_blocks import RESULTS, mean_sd, one_run

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="rotten_tomatoes")
    parser.add_argument("--ranks", nargs="+", type=int, default=[8])
    parser.add_argument("--learning-rates", nargs="+", default=["1e-4", "1e-3"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument(
        "--set",
        nargs="*",
        default=[],
        dest="overrides",
        help="overrides for the LoRA runs (e.g. training.epochs=6)",
    )
    parser.add_argument("--tag", default="", help="added to the LoRA runs' names")
    parser.add_argument("--reuse", action="store_true", help="reuse finished runs")
    return parser.parse_args(argv)


def adapter_numbers(run_dir):
    """(numbers the adapter file holds, its size in kB)."""
    path = run_dir / "adapter.weights.h5"
    with h5py.File(path, "r") as adapter:
        sizes = []
        adapter.visititems(
            lambda _, item: sizes.append(item.size) if isinstance(item, h5py.Dataset) else None
        )
    return sum(sizes), path.stat().st_size / 1e3


def main(argv=None):
    args = parse_args(argv)
    variants = [("full fine-tune", "", [])] + [
        (
            f"LoRA r{rank}, lr {rate}{' '.join(['', *args.overrides])}",
            f"_lora{rank}_lr{rate}{args.tag}",
            [
                "model.fine_tune=lora",
                f"model.fine_tune.rank={rank}",
                f"training.learning_rate={rate}",
                *args.overrides,
            ],
        )
        for rank in args.ranks
        for rate in args.learning_rates
    ]
    lines = [
        "| recipe | validation accuracy % | test accuracy % | later epochs s | "
        "/ full | trained weights | adapter file kB | wall time / run s |",
        "|---" * 8 + "|",
    ]
    full_epoch = None
    for label, tag, overrides in variants:
        runs = [
            one_run(args.dataset, "all", seed, overrides, args.reuse, tag) for seed in args.seeds
        ]
        later = statistics.mean(s for run in runs for s in run["epoch_seconds"][1:])
        full_epoch = full_epoch or later
        run_dir = RESULTS / "runs" / f"{args.dataset}_minilm_kall{tag}_seed{args.seeds[0]}"
        trained, size = adapter_numbers(run_dir) if tag else (runs[0]["num_parameters"], None)
        lines.append(
            f"| {label} | {mean_sd([r['validation_accuracy'] for r in runs])} "
            f"| {mean_sd([r['test_accuracy'] for r in runs])} | {later:.0f} "
            f"| {later / full_epoch:.2f} | {trained:,} | {'–' if size is None else f'{size:.0f}'} "
            f"| {mean_sd([r['wall_time_s'] for r in runs], 0)} |"
        )
        print("\n".join(lines), flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "lora.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
