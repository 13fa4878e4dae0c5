"""Text pairs and label sets: what a config naming the user's files gives, beside TF-IDF
baselines on the same splits; prints the table.

Usage:
    python bench/bench_task_shapes.py                      # both shapes, seed 0
    python bench/bench_task_shapes.py --shapes pairs --seeds 0 1 2 --reuse

The goals (issue 54): a config naming a pair file (two text columns, about 5k rows) trains
with the default encoder (`model.pretrained: auto`) within GOAL_SECONDS of `train.py` on
2 cores to at least the TF-IDF pair baseline + GOAL_MARGIN points of test accuracy; a
multi-label file the same, in test micro-F1 against one-vs-rest TF-IDF + LR. The files
(`task_shape_data`: STS-B pairs from a pinned wheel; label sets built from Reuters R8)
come with their own validation and test files; each config names only them and their
columns, and `train.py` runs as a user runs it, in its own process, timed from start to
exit. The baselines fit on the same training file, C chosen on validation (accuracy,
micro-F1), the test file scored once:
- pairs: TF-IDF (word 1-2 grams, min_df 2, sublinear tf) fitted on both sides of the
  training pairs, features [a, b, |a - b|, a * b] of each pair's sides a and b, logistic
  regression;
- label sets: the same TF-IDF, one-vs-rest logistic regression, a threshold per label
  chosen on validation as train.py chooses ours (`engine.label_sets.choose_thresholds`).
Runs go to OUT/task_shapes/runs/; the table to OUT/task_shapes.md and .json. CPU-bound:
run nothing else meanwhile.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from task_shape_data import label_set_files, pair_files  # noqa: E402

from run_folder import runs  # noqa: E402

RESULTS = ROOT / "bench" / "results"
GOAL_MARGIN = 1.0
GOAL_SECONDS = 600.0
C_VALUES = (1.0, 10.0, 100.0)
SHAPES = {
    # (files, the dataset fields beside them, the test metric compared)
    "pairs": (pair_files, {"text_column": ["first", "second"]}, "accuracy"),
    "label_sets": (
        label_set_files,
        {"label_column": "topics", "label_separator": "|"},
        "micro_f1",
    ),
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--data-dir", default=None, help="TFDS folder (wheels, Reuters R8)")
    parser.add_argument("--reuse", action="store_true", help="reuse finished runs")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    return args


def write_config(folder, shape, data_dir):
    """The user's config: their three files and columns; everything else the defaults."""
    make_files, fields, _ = SHAPES[shape]
    paths = make_files(folder, data_dir)
    dataset = {f"{split}_file": str(path) for split, path in paths.items()}
    config = folder / f"{shape}.yaml"
    config.write_text(yaml.safe_dump({"dataset": {**dataset, **fields}}, sort_keys=False))
    return config, paths


def train_run(config, name, seed, args):
    """train.py in its own process (unless reused): (metrics.json, wall seconds)."""
    root = args.out / "task_shapes" / "runs"
    run_dir, timing = root / name, root / name / "bench.json"
    if not (args.reuse and (run_dir / runs.METRICS_FILE).is_file() and timing.is_file()):
        command = [
            sys.executable, str(ROOT / "train.py"), "--config", str(config), "--overwrite",
            "--set", f"output.root={root}", f"output.name={name}", f"training.seed={seed}",
        ]  # fmt: skip
        print(f"\n=== {name} ===\n{shlex.join(command)}", flush=True)
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True)
        timing.write_text(json.dumps({"wall_clock_s": round(time.perf_counter() - started, 1)}))
    metrics = json.loads((run_dir / runs.METRICS_FILE).read_text())
    return metrics, json.loads(timing.read_text())["wall_clock_s"]


def pair_baseline(splits):
    """Test accuracy of TF-IDF [a, b, |a - b|, a * b] + LR, C chosen on validation."""
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from tokenization.pairs import split_pair

    sides = {name: list(zip(*map(split_pair, texts))) for name, (texts, _) in splits.items()}
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    vectorizer.fit(list(sides["train"][0]) + list(sides["train"][1]))

    def features(name):
        a, b = (vectorizer.transform(side) for side in sides[name])
        return hstack([a, b, abs(a - b), a.multiply(b)]).tocsr()

    return _chosen(
        [LogisticRegression(C=C, max_iter=2000) for C in C_VALUES],
        {name: (features(name), labels) for name, (_, labels) in splits.items()},
        lambda model, x, y: float((model.predict(x) == y).mean()),
    )


def label_set_baseline(splits):
    """Test micro-F1 of TF-IDF + one-vs-rest LR, thresholds and C chosen on validation."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier

    from engine.label_sets import choose_thresholds, label_set_metrics

    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    vectorizer.fit(splits["train"][0])
    data = {name: (vectorizer.transform(texts), y) for name, (texts, y) in splits.items()}
    validation = data["validation"]

    def micro_f1(model, x, y):
        cut = choose_thresholds(validation[1], model.predict_proba(validation[0]))
        return label_set_metrics(y, model.predict_proba(x), cut)["micro_f1"]

    models = [OneVsRestClassifier(LogisticRegression(C=C, max_iter=2000)) for C in C_VALUES]
    return _chosen(models, data, micro_f1)


def _chosen(models, data, score):
    """{"validation", "test", "C"}: each model fitted on train, the best on validation
    scored on test once."""
    started = time.perf_counter()
    fitted = [model.fit(*data["train"]) for model in models]
    scores = [score(model, *data["validation"]) for model in fitted]
    best = fitted[int(np.argmax(scores))]
    return {
        "validation": max(scores),
        "test": score(best, *data["test"]),
        "C": float(getattr(best, "C", getattr(best, "estimator", best).C)),
        "seconds": round(time.perf_counter() - started, 1),
    }


def goal_met(ours, baseline, seconds):
    """Every seed at least GOAL_MARGIN points over the baseline, within GOAL_SECONDS.

    Example:
    >>> goal_met([0.86, 0.87], 0.85, [200, 590]), goal_met([0.855], 0.85, [10])
    (True, False)
    """
    margins = [round(100 * (value - baseline), 6) for value in ours]
    return min(margins) >= GOAL_MARGIN and max(seconds) <= GOAL_SECONDS


def main(argv=None):
    from config.files import load_config
    from data import load_text_splits

    args = parse_args(argv)
    folder = args.out / "task_shapes"
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for shape in args.shapes:
        config, _ = write_config(folder, shape, args.data_dir)
        splits = load_text_splits(load_config(config).dataset)
        named = {split: getattr(splits, split) for split in ("train", "validation", "test")}
        baseline = (pair_baseline if shape == "pairs" else label_set_baseline)(named)
        metric = SHAPES[shape][2]
        seeds = [train_run(config, f"{shape}_{seed}", seed, args) for seed in args.seeds]
        ours = [metrics["test"][metric] for metrics, _ in seeds]
        seconds = [wall for _, wall in seeds]
        rows.append({
            "shape": shape, "metric": metric, "sizes": splits.sizes(),
            "classes": len(splits.class_names), "baseline": baseline, "seeds": args.seeds,
            "ours": ours, "validation": [m["validation"][metric] for m, _ in seeds],
            "seconds": seconds, "met": goal_met(ours, baseline["test"], seconds),
        })  # fmt: skip
    table = format_table(rows)
    (args.out / "task_shapes.json").write_text(json.dumps(rows, indent=2) + "\n")
    (args.out / "task_shapes.md").write_text(table + "\n")
    print(table)
    return 0


def format_table(rows):
    lines = [
        "| file | rows (train / validation / test), classes | metric | TF-IDF baseline: "
        "validation / test (C) | ours: validation / test per seed | margin (points) | "
        "train.py s | goal met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        sizes, base = row["sizes"], row["baseline"]
        margin = min(100 * (value - base["test"]) for value in row["ours"])
        lines.append(
            f"| {row['shape']} | {sizes['train']} / {sizes['validation']} / {sizes['test']}, "
            f"{row['classes']} | test {row['metric']} | {100 * base['validation']:.2f} / "
            f"{100 * base['test']:.2f} ({base['C']:g}) | "
            + ", ".join(
                f"{100 * v:.2f} / {100 * t:.2f}" for v, t in zip(row["validation"], row["ours"])
            )
            + f" | {margin:+.2f} | {', '.join(f'{s:.0f}' for s in row['seconds'])} | "
            f"{'yes' if row['met'] else 'no'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
