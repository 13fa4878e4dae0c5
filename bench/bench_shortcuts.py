"""Does `evaluate.py --tokens` find a shortcut planted in a user's file? Prints the table.

Usage:
    python bench/bench_shortcuts.py                                # 3 seeds, both recipes
    python bench/bench_shortcuts.py --recipes scratch --seeds 0
    python bench/bench_shortcuts.py --reuse    # reuse finished runs, measure the rest

The protocol of Bastings et al. 2022 ("Will you find these shortcuts?"): a built-in
dataset's texts (all splits, a stratified sample of `--examples` of them, seeded) are
written to a user-style CSV file, and a made-up word is inserted at a random word boundary
into them:
- planted: into 10% of one class's texts (class 1), every split: the one sure cue;
- spread: into 10% of each class's texts: no cue at all.
Each file is trained from a config naming only the file (`dataset.train_file`, the
schema's defaults, validation and test carved out of it), from scratch (`model.pretrained:
null`) and with
`model.pretrained: all_minilm_l6_v2`, with each seed, then measured with
`evaluate.py RUN --tokens` (1000 test examples, the defaults). The goal: planted, the word
ranks first for its class and is marked a shortcut in every run; spread, it is in no
class's top 20 and never marked. Runs go to bench/results/shortcuts/; the table is written
to bench/results/shortcuts.md and .json. It is CPU-bound: run nothing else meanwhile.
"""

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from engine import runs  # noqa: E402

RESULTS = ROOT / "bench" / "results"
WORD = "zqxv"
PLANTED_CLASS = 1
SHARE = 0.10
RECIPES = {
    "scratch": ["model.pretrained=null"],
    # 3 epochs: the published rows' (training.epochs: auto was 3 then, 2 now).
    "pretrained": ["model.pretrained=all_minilm_l6_v2", "training.epochs=3"],
}
TOP = 20


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="rotten_tomatoes")
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--recipes", nargs="+", choices=sorted(RECIPES), default=["scratch", "pretrained"]
    )
    parser.add_argument("--reuse", action="store_true")
    return parser.parse_args(argv)


def write_files(dataset, examples, folder):
    """{variant: CSV path} of the dataset's sample, with the word planted or spread."""
    from data import load_text_splits

    splits = load_text_splits({"name": dataset})
    texts = np.concatenate([splits.train[0], splits.validation[0], splits.test[0]])
    labels = np.concatenate([splits.train[1], splits.validation[1], splits.test[1]])
    rng = np.random.default_rng(0)
    keep = np.sort(rng.choice(len(texts), min(examples, len(texts)), replace=False))
    texts, labels = texts[keep], labels[keep]
    files = {}
    for variant in ("planted", "spread"):
        chosen = np.zeros(len(texts), bool)
        for label in np.unique(labels):
            if variant == "planted" and label != PLANTED_CLASS:
                continue
            members = np.flatnonzero(labels == label)
            chosen[rng.choice(members, round(SHARE * len(members)), replace=False)] = True
        path = folder / f"{dataset}_{variant}.csv"
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(["text", "label"])
            for text, label, insert in zip(texts, labels, chosen, strict=True):
                words = str(text).split()
                if insert:
                    site = rng.integers(len(words) + 1)
                    words = words[:site] + [WORD] + words[site:]
                writer.writerow([" ".join(words), splits.class_names[label]])
        files[variant] = path
    return files, splits.class_names


def run_one(path, recipe, seed, root, reuse):
    """Trains (unless reused) and measures one run: its row of the table."""
    import evaluate
    import train
    from engine.evaluation.tokens_report import TOKENS_FILE

    name = f"{path.stem}_{recipe}_{seed}"
    config = root / f"{name}.yaml"
    config.write_text(f"dataset:\n  train_file: {path}\n")
    run_dir = root / name
    if not (reuse and (run_dir / runs.MODEL_FILE).is_file()):
        assert (
            train.main(
                [
                    "--config",
                    str(config),
                    "--set",
                    f"output.root={root}",
                    f"output.name={name}",
                    f"training.seed={seed}",
                    *RECIPES[recipe],
                ]
            )
            == 0
        )
    trained = json.loads((run_dir / runs.METRICS_FILE).read_text())["wall_time_s"]
    started = time.perf_counter()
    assert evaluate.main([str(run_dir), "--tokens"]) == 0
    measured = time.perf_counter() - started
    report = json.loads((run_dir / runs.EVAL_DIR / "test" / TOKENS_FILE).read_text())
    metrics = json.loads((run_dir / runs.EVAL_DIR / "test" / runs.METRICS_FILE).read_text())
    ranks, shortcuts = {}, {}
    for label, entries in report["classes"].items():
        words = [entry["word"] for entry in entries]
        ranks[label] = words.index(WORD) + 1 if WORD in words else None
        shortcuts[label] = any(entry["shortcut"] for entry in entries if entry["word"] == WORD)
    return {
        "file": path.stem,
        "recipe": recipe,
        "seed": seed,
        "accuracy": metrics["accuracy"],
        "ranks": ranks,
        "shortcuts": shortcuts,
        "check": report["faithfulness"],
        "train_seconds": trained,
        "tokens_seconds": measured,
    }


def verdict(row, class_names):
    planted = class_names[PLANTED_CLASS]
    if row["file"].endswith("planted"):
        return row["ranks"][planted] == 1 and row["shortcuts"][planted]
    return not any(row["shortcuts"].values()) and all(
        rank is None or rank > TOP for rank in row["ranks"].values()
    )


def format_table(rows, class_names):
    lines = [
        "| file | recipe | seed | test accuracy | rank of the word per class | marked a "
        "shortcut | goal met | top-10 vs random insertion | train s | --tokens s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ranks = ", ".join(f"{label}: {rank or '-'}" for label, rank in row["ranks"].items())
        marked = ", ".join(label for label, flag in row["shortcuts"].items() if flag) or "no"
        check = row["check"] or {}
        lines.append(
            f"| {row['file']} | {row['recipe']} | {row['seed']} | {100 * row['accuracy']:.2f} "
            f"| {ranks} | {marked} | {'yes' if verdict(row, class_names) else 'NO'} | "
            f"{check.get('top_words', 0):.3f} vs {check.get('random_words', 0):.3f} | "
            f"{row['train_seconds']:.0f} | {row['tokens_seconds']:.0f} |"
        )
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    root = RESULTS / "shortcuts"
    root.mkdir(parents=True, exist_ok=True)
    files, class_names = write_files(args.dataset, args.examples, root)
    rows = [
        run_one(path, recipe, seed, root, args.reuse)
        for recipe in args.recipes
        for path in files.values()
        for seed in args.seeds
    ]
    table = format_table(rows, list(class_names))
    (RESULTS / "shortcuts.json").write_text(json.dumps(rows, indent=2) + "\n")
    (RESULTS / "shortcuts.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
