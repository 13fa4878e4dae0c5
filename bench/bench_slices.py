"""A negative control for `evaluate.py --slices`: random columns give no weak slice.

A planted weak slice is still found, first. Prints a row per seed and a table.

Usage:
    python evaluate.py runs/default                      # writes eval/test/predictions.csv
    python bench/bench_slices.py runs/default            # seeds 0-4, the test split
    python bench/bench_slices.py runs/default --split validation --min-count 30 --seeds 0 1

It reads a finished evaluation, `RUN/eval/<split or file stem>/predictions.csv` (texts,
gold and predicted labels; the run's labels.json orders the classes), and loads no model.
Per seed it adds three columns of random values, uniform over 2, 5 and 20 values, and a
planted column whose value is "wrong" on exactly the wrong predictions ("right"
elsewhere), then finds and tests the candidate slices with the library's functions
(`inspection.methods.slices`), as `--slices` does with `dataset.slice_columns`. The random
columns do not depend on the outcomes, so any of their slices listed as weak is a false
alarm. Goal: none in every seed, and the planted slice the first weak slice; Bonferroni
bounds the chance of a false alarm among all slices at 5% per seed, so about 1 seed in 20
may show one. Seconds on a test split of a few thousand texts.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inspection.methods.slices import candidate_slices, measure_slices  # noqa: E402
from run_folder import runs  # noqa: E402

RANDOM_COLUMNS = {"random2": 2, "random5": 5, "random20": 20}  # name: values, uniform
PLANTED_COLUMN = "planted"
PLANTED_SLICE = f"column {PLANTED_COLUMN} = wrong"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", default="runs/default", help="a finished run folder")
    parser.add_argument(
        "--split", default="test", help="the eval/ folder: a split, or a --data file's stem"
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument(
        "--min-count", type=int, default=20, help="the fewest examples a slice holds, as --slices"
    )
    return parser.parse_args(argv)


def load_outcomes(run_dir, split):
    """(texts, gold label ids, class names, whether each prediction was right) of the run's
    evaluation of `split`.

    Raises:
        FileNotFoundError: the run has no such evaluation; the message says how to make it.
    """
    run_dir = Path(run_dir)
    path = run_dir / runs.EVAL_DIR / split / runs.PREDICTIONS_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: missing; evaluate the run first: python evaluate.py {run_dir}"
            + ("" if split == "test" else f" (--split {split}, or --data FILE)")
        )
    class_names = json.loads((run_dir / runs.LABELS_FILE).read_text())
    table = pd.read_csv(path, keep_default_na=False, dtype={"text": str})  # "NA" is a text
    ids = {name: index for index, name in enumerate(class_names)}
    labels = np.array([ids[str(name)] for name in table.true_label])
    correct = (table.true_label == table.predicted_label).to_numpy()
    return table.text.tolist(), labels, class_names, correct


def is_random(slice_name):
    """Whether a slice is one of a random column's values."""
    return slice_name.startswith(tuple(f"column {column} = " for column in RANDOM_COLUMNS))


def control_row(texts, labels, class_names, correct, seed, min_count=20):
    """One seed's random columns and the planted one, measured as `--slices` measures:
    {"seed", "examples", "accuracy", "candidates", "random_slices", "random_weak",
    "random_min_p" (the random slices' smallest p-value), "threshold" (alpha/m), "weak",
    "planted_rank" (1: the first weak slice; None: not weak or no candidate)}."""
    rng = np.random.default_rng(seed)
    columns = {
        name: rng.integers(values, size=len(texts)).astype(str)
        for name, values in RANDOM_COLUMNS.items()
    }
    columns[PLANTED_COLUMN] = np.where(correct, "right", "wrong")
    found = candidate_slices(texts, labels, class_names, columns, min_count)
    report = measure_slices(found, correct)
    weak = [entry["slice"] for entry in report["weak_slices"]]
    random_p_values = [entry["p_value"] for entry in report["slices"] if is_random(entry["slice"])]
    return {
        "seed": seed,
        "examples": report["examples"],
        "accuracy": report["accuracy"],
        "candidates": len(found),
        "random_slices": len(random_p_values),
        "random_weak": sum(is_random(name) for name in weak),
        "random_min_p": min(random_p_values, default=None),
        "threshold": report["alpha"] / max(1, len(found)),
        "weak": len(weak),
        "planted_rank": weak.index(PLANTED_SLICE) + 1 if PLANTED_SLICE in weak else None,
    }


def control_table(rows):
    """The rows as Markdown, with a closing line on the goal: per seed the candidate
    slices, those of the random columns, how many of them are weak and their smallest
    p-value (the threshold alpha/m in brackets), all the weak slices, and the planted
    slice's rank among them.

    Example:
    >>> row = {"seed": 0, "examples": 1066, "accuracy": 0.75, "candidates": 90,
    ...        "random_slices": 27, "random_weak": 0, "random_min_p": 0.0123,
    ...        "threshold": 0.05 / 90, "weak": 3, "planted_rank": 1}
    >>> print(control_table([row]))
    | seed | texts | accuracy | slices | random | random weak | least random p | weak | planted |
    |---:|---:|---:|---:|---:|---:|---:|---:|---:|
    | 0 | 1066 | 75.00% | 90 | 27 | 0 | 0.012 (5.6e-04) | 3 | 1 |
    Random columns: no weak slice in 1 of 1 seeds; the planted slice first in 1 of 1.
    """
    lines = [
        "| seed | texts | accuracy | slices | random | random weak | least random p | weak "
        "| planted |",
        "|---:" * 9 + "|",
    ]
    for row in rows:
        rank = "not weak" if row["planted_rank"] is None else row["planted_rank"]
        least = (
            "none"
            if row["random_min_p"] is None
            else f"{row['random_min_p']:.2g} ({row['threshold']:.1e})"
        )
        lines.append(
            f"| {row['seed']} | {row['examples']} | {100 * row['accuracy']:.2f}% "
            f"| {row['candidates']} | {row['random_slices']} | {row['random_weak']} "
            f"| {least} | {row['weak']} | {rank} |"
        )
    clean = sum(row["random_weak"] == 0 for row in rows)
    first = sum(row["planted_rank"] == 1 for row in rows)
    lines.append(
        f"Random columns: no weak slice in {clean} of {len(rows)} seeds; the planted slice "
        f"first in {first} of {len(rows)}."
    )
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    try:
        texts, labels, class_names, correct = load_outcomes(args.run, args.split)
    except FileNotFoundError as error:
        print(f"bench_slices.py: error: {error}", file=sys.stderr)
        return 2
    rows = []
    for seed in args.seeds:
        rows.append(control_row(texts, labels, class_names, correct, seed, args.min_count))
        print(json.dumps(rows[-1]), flush=True)
    print(control_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
