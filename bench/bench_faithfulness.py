"""How faithful each attribution method is, on real models: ERASER's AOPC with 95% intervals.

Usage:
    python bench/bench_faithfulness.py                       # 3 datasets x 2 recipes
    python bench/bench_faithfulness.py --datasets rotten_tomatoes --models ours --examples 100
    python bench/bench_faithfulness.py --quick               # a few examples, to check the script

For each dataset and recipe, on seed 0's run of bench/bench_accuracy.py (reused from
bench/results/runs, trained there when missing, same splits and protocol): `ours`, the
from-scratch `configs/<dataset>.yaml`, and `minilm`, all-MiniLM-L6-v2 fine-tuned
(`configs/<dataset>_minilm.yaml`). The first N texts of the validation split (methods are a
choice like a recipe's: the test split is not looked at) are scored by every method of
`inspection.methods.attribution` for the predicted class and measured by
`inspection.methods.faithfulness.measure_faithfulness`: AOPC comprehensiveness (higher is faithful)
and sufficiency (lower is faithful) over bins of 1, 5, 10, 20 and 50% of the tokens, tokens
removed by masking them out of attention and pooling, random averaged over 10 orderings, a
paired bootstrap (1,000 resamples) for every interval. Time per example is each method's
alone (the removal curves are extra), on this machine's 2 cores, run by run.

Goals (issue 27): on Rotten Tomatoes the best method's AOPC-comp >= 2.5x random and
AOPC-suff <= half of random; on each dataset the best method beats rollout on AOPC-comp
with an interval excluding zero; stretch: the best single-pass gradient method (gradient x
input, its conservative variant, attention x gradient: one forward and one backward pass)
reaches 80% of leave-one-out's AOPC-comp with at most a tenth of its forward passes (one
per token). Writes bench/results/faithfulness.md and .json.
"""

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
RESULTS = ROOT / "bench" / "results"
DATASETS = ("rotten_tomatoes", "reuters_r8", "twenty_newsgroups")
MODELS = ("ours", "minilm")
# MiniLM's six blocks cost about 3 s per Rotten Tomatoes example for all eight methods and
# their removal curves on 2 cores, and several times that at 128 tokens.
DEFAULT_EXAMPLES = {
    ("ours", "short"): 500,
    ("ours", "long"): 500,
    ("minilm", "short"): 100,
    ("minilm", "long"): 50,
}
SINGLE_PASS = ("gradient_x_input", "conservative_gradient_x_input", "attention_gradient")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument(
        "--examples",
        type=int,
        help="validation examples per model (default: 500 ours; minilm 100 "
        "on Rotten Tomatoes, 50 on the 128-token news datasets)",
    )
    parser.add_argument("--quick", action="store_true", help="6 examples, to check the script")
    return parser.parse_args(argv)


def goals(report):
    """The issue's checks on one model's report: name -> (value, met)."""
    methods = report["methods"]
    best = methods[report["best_method"]]
    random = methods["random"]
    comp_ratio = best["comprehensiveness"]["mean"] / random["comprehensiveness"]["mean"]
    suff_ratio = best["sufficiency"]["mean"] / random["sufficiency"]["mean"]
    beats_rollout = (
        best["vs_rollout"]["comprehensiveness"]["ci95"][0] > 0 if "vs_rollout" in best else False
    )
    single = max(SINGLE_PASS, key=lambda name: methods[name]["comprehensiveness"]["mean"])
    share = (
        methods[single]["comprehensiveness"]["mean"]
        / methods["leave_one_out"]["comprehensiveness"]["mean"]
    )
    passes = report["mean_text_tokens"]  # leave-one-out's forward passes per example
    return {
        "best comp / random comp": (f"{comp_ratio:.2f}x", comp_ratio >= 2.5),
        "best suff / random suff": (f"{suff_ratio:.2f}x", suff_ratio <= 0.5),
        "best beats rollout (comp, CI > 0)": (
            "self"
            if report["best_method"] == "rollout"
            else f"{best['vs_rollout']['comprehensiveness']['ci95'][0]:+.3f} lower bound",
            beats_rollout,
        ),
        f"stretch: {single} / leave-one-out comp": (
            f"{share:.0%} with 1 pass vs {passes:.0f}",
            share >= 0.8 and passes >= 10,
        ),
    }


def format_tables(results):
    lines = []
    for (dataset, model), report in results.items():
        lines += [
            f"### {dataset}, {model} ({report['examples']} validation examples, "
            f"{report['mean_text_tokens']:.0f} tokens on average, best: "
            f"`{report['best_method']}`; {report['seconds']:.0f} s, "
            f"{report['date']})",
            "",
            report["table"],
            "",
            "| goal | measured | met? |",
            "|---|---|---|",
        ]
        lines += [
            f"| {name} | {value} | {'yes' if met else 'no'} |"
            for name, (value, met) in goals(report).items()
        ]
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    import numpy as np
    from bench_accuracy import BENCH_FILE, epoch_cost_of, neural_config, neural_run

    from engine.evaluation.faithfulness import faithfulness_table, measure_run_faithfulness
    from run_folder import saved_run

    # Runs of earlier invocations stay in the table: one dataset can be measured at a time.
    path = RESULTS / "faithfulness.json"
    earlier = json.loads(path.read_text())["results"] if path.exists() and not args.quick else {}
    results = {tuple(key.split("/")): report for key, report in earlier.items()}
    for dataset in args.datasets:
        for model in args.models:
            config = neural_config(dataset, model, seed=0)
            run_dir = RESULTS / "runs" / config.output.name
            # Trained when missing, with bench_accuracy's bookkeeping, so that it reuses it.
            cost = None if (run_dir / BENCH_FILE).exists() else epoch_cost_of(config)
            neural_run(config, cost, reuse=True, no_train=False)
            run = saved_run.load_run(run_dir)
            texts, _ = run.load_split("validation")
            length = "short" if dataset == "rotten_tomatoes" else "long"
            examples = 6 if args.quick else args.examples or DEFAULT_EXAMPLES[(model, length)]
            print(f"=== {dataset}, {model}: {examples} examples ===", flush=True)
            start = time.perf_counter()
            report = measure_run_faithfulness(run, np.asarray(texts), examples)
            report["table"] = faithfulness_table(report)
            report["seconds"] = time.perf_counter() - start
            report["date"] = time.strftime("%Y-%m-%d")
            print(report["table"], f"\n{report['seconds']:.0f} s", flush=True)
            results[(dataset, model)] = report
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
        f"{time.strftime('%Y-%m-%d')}"
    )
    tables = format_tables(results)
    print(tables)
    if args.quick:
        return 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "faithfulness.md").write_text(f"{machine}\n\n{tables}\n")
    path.write_text(
        json.dumps(
            {"machine": machine, "results": {f"{d}/{m}": r for (d, m), r in results.items()}},
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
