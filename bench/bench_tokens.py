"""Is the ranking of `evaluate.py --tokens` faithful, and how long do it and `--compare` take?

Usage:
    python bench/bench_tokens.py                # trains the three runs unless they exist
    python bench/bench_tokens.py --runs rotten_tomatoes reuters_r8

For each built-in recipe (`configs/<name>.yaml`, seed 0, trained into runs/<name> unless
a finished run is there), `evaluate.py runs/<name> --tokens 1000` on the test split: the
ranking check of tokens.json (the top 10 words of each class against 10 frequency-matched
random words, inserted into the same texts of other classes: their mean rise of the
class's probability, the ratio and the paired interval of the difference) and its wall
time. Then `evaluate.py runs/rotten_tomatoes_minilm --compare runs/rotten_tomatoes` (a
fine-tuned MiniLM against the from-scratch model) and its wall time. Goals: ratio at least
3 with the interval above zero; --tokens 1000 on the MiniLM run within 5 minutes and
--compare within 2 on 2 cores. The table is written to bench/results/tokens.md and .json.
It is CPU-bound: run nothing else meanwhile.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from engine.evaluation.compare import compare_file  # noqa: E402
from engine.evaluation.tokens_report import TOKENS_FILE  # noqa: E402
from run_folder import runs  # noqa: E402

RESULTS = ROOT / "bench" / "results"
RUNS = ("rotten_tomatoes_minilm", "rotten_tomatoes", "reuters_r8")
COMPARED = ("rotten_tomatoes_minilm", "rotten_tomatoes")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=list(RUNS), choices=RUNS)
    parser.add_argument("--examples", type=int, default=1000)
    return parser.parse_args(argv)


def trained(name):
    """runs/<name>, trained from configs/<name>.yaml unless finished there."""
    import train

    run_dir = ROOT / "runs" / name
    if not (run_dir / runs.MODEL_FILE).is_file():
        assert (
            train.main(
                [
                    "--config",
                    str(ROOT / "configs" / f"{name}.yaml"),
                    "--set",
                    f"output.root={ROOT / 'runs'}",
                ]
            )
            == 0
        )
    return run_dir


def timed(argv):
    import evaluate

    started = time.perf_counter()
    assert evaluate.main(argv) == 0
    return time.perf_counter() - started


def main(argv=None):
    args = parse_args(argv)
    rows = []
    for name in args.runs:
        run_dir = trained(name)
        seconds = timed([str(run_dir), "--tokens", str(args.examples)])
        report = json.loads((run_dir / runs.EVAL_DIR / "test" / TOKENS_FILE).read_text())
        metrics = json.loads((run_dir / runs.EVAL_DIR / "test" / runs.METRICS_FILE).read_text())
        rows.append(
            {
                "run": name,
                "accuracy": metrics["accuracy"],
                "examples": report["examples"],
                "check": report["faithfulness"],
                "tokens_seconds": seconds,
            }
        )
    compared = None
    if set(COMPARED) <= set(args.runs):
        first, second = (ROOT / "runs" / name for name in COMPARED)
        seconds = timed([str(first), "--compare", str(second)])
        report = json.loads((first / "eval" / "test" / compare_file(second)).read_text())
        compared = {
            "runs": list(COMPARED),
            "seconds": seconds,
            "agreement": report["agreement"],
            "accuracy_difference": report["accuracy_difference"],
            "accuracy_difference_ci": report["accuracy_difference_ci"],
            "median_spearman": report["median_spearman"],
        }
    lines = [
        "| run | test accuracy | examples | top-10 words' insertion | random words' | "
        "ratio | difference [95% CI] | --tokens s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        check = row["check"]
        ratio = f"{check['ratio']:.1f}x" if check["ratio"] else "random <= 0"
        lines.append(
            f"| {row['run']} | {100 * row['accuracy']:.2f} | {row['examples']} | "
            f"{check['top_words']:.3f} | {check['random_words']:.3f} | {ratio} | "
            f"{check['difference']:.3f} [{check['difference_ci'][0]:.3f}, "
            f"{check['difference_ci'][1]:.3f}] | {row['tokens_seconds']:.0f} |"
        )
    if compared:
        low, high = compared["accuracy_difference_ci"]
        lines += [
            "",
            f"--compare {compared['runs'][0]} against {compared['runs'][1]}: "
            f"{compared['seconds']:.0f} s; agreement {100 * compared['agreement']:.2f}%, "
            f"accuracy difference {100 * compared['accuracy_difference']:+.2f} points "
            f"[{100 * low:+.2f}, {100 * high:+.2f}], median Spearman "
            f"{compared['median_spearman']:.3f}",
        ]
    table = "\n".join(lines)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "tokens.json").write_text(
        json.dumps({"rows": rows, "compare": compared}, indent=2) + "\n"
    )
    (RESULTS / "tokens.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
