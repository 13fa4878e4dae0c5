"""Does `evaluate.py --tokens` find a shortcut planted in a user's file? Prints the table.

Usage:
    python bench/bench_shortcuts.py                                # 3 seeds, both recipes
    python bench/bench_shortcuts.py --recipes scratch --seeds 0
    python bench/bench_shortcuts.py --reuse    # reuse finished and measured runs, do the rest

The protocol of Bastings et al. 2022 ("Will you find these shortcuts?"): a built-in
dataset's texts (all splits, a stratified sample of `--examples` of them, seeded) are
written to a user-style CSV file, and a made-up word is inserted at a random word boundary
into them:
- planted: into 10% of one class's texts (`--planted-class`, the second by default), every
  split: the one sure cue;
- spread: into 10% of each class's texts: no cue at all;
- everywhere: into 96% of all texts (as a question mark ends nearly every question): no cue.
Each file is trained from a config naming only the file (`dataset.train_file`, the
schema's defaults, validation and test carved out of it), from scratch (`model.pretrained:
null`) and with
`model.pretrained: all_minilm_l6_v2`, with each seed, then measured with
`evaluate.py RUN --tokens` (1000 test examples, the defaults). The goal: planted, the word
is in its class's top 3 and marked a shortcut in every run; spread, it is in no class's
top 20 and never marked; everywhere, in no class's top 10 and never marked. Runs go to
bench/results/shortcuts/; the table is written to bench/results/shortcuts.md and .json. It
is CPU-bound: run nothing else meanwhile.
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
from run_folder import runs  # noqa: E402

RESULTS = ROOT / "bench" / "results"
WORD = "zqxv"
SHARE = 0.10
EVERYWHERE_SHARE = 0.96
VARIANTS = ("planted", "spread", "everywhere")
TOP = {"planted": 3, "spread": 20, "everywhere": 10}  # planted: within; others: outside
RECIPES = {
    "scratch": ["model.pretrained=null"],
    # 3 epochs: the published rows' (training.epochs: auto was 3 then, 2 now).
    "pretrained": ["model.pretrained=all_minilm_l6_v2", "training.epochs=3"],
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["rotten_tomatoes", "reuters_r8"])
    parser.add_argument(
        "--planted-class",
        nargs="+",
        default=["fresh", "acq"],
        help="per dataset, the class whose texts get the planted word",
    )
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--recipes", nargs="+", choices=sorted(RECIPES), default=["scratch", "pretrained"]
    )
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args(argv)
    if len(args.planted_class) != len(args.datasets):
        parser.error("--planted-class names one class per dataset of --datasets")
    return args


def write_files(dataset, examples, folder, planted_name, variants):
    """{variant: CSV path} of the dataset's sample, with the word planted, spread or put
    everywhere; and the class names."""
    from data import load_text_splits

    splits = load_text_splits({"name": dataset})
    texts = np.concatenate([splits.train[0], splits.validation[0], splits.test[0]])
    labels = np.concatenate([splits.train[1], splits.validation[1], splits.test[1]])
    rng = np.random.default_rng(0)
    keep = np.sort(rng.choice(len(texts), min(examples, len(texts)), replace=False))
    texts, labels = texts[keep], labels[keep]
    planted = list(splits.class_names).index(planted_name)
    files = {}
    for variant in variants:
        chosen = np.zeros(len(texts), bool)
        share = EVERYWHERE_SHARE if variant == "everywhere" else SHARE
        for label in np.unique(labels):
            if variant == "planted" and label != planted:
                continue
            members = np.flatnonzero(labels == label)
            chosen[rng.choice(members, round(share * len(members)), replace=False)] = True
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
    return files, list(splits.class_names)


def run_one(path, recipe, seed, root, reuse):
    """Trains (unless reused) and measures one run: its row of the table."""
    import evaluate
    import train
    from engine.evaluation.tokens_report import TOKENS_FILE

    name = f"{path.stem}_{recipe}_{seed}"
    stored = root / name / "bench_row.json"
    if reuse and stored.is_file():  # trained and measured before
        return json.loads(stored.read_text())
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
    row = {
        "file": path.stem,
        "variant": path.stem.rsplit("_", 1)[-1],
        "recipe": recipe,
        "seed": seed,
        "accuracy": metrics["accuracy"],
        "ranks": ranks,
        "shortcuts": shortcuts,
        "check": report["faithfulness"],
        "train_seconds": trained,
        "tokens_seconds": measured,
    }
    stored.write_text(json.dumps(row, indent=2) + "\n")
    return row


def verdict(row, planted_name):
    """Whether the row meets its variant's goal (see the module docstring)."""
    top = TOP[row["variant"]]
    if row["variant"] == "planted":
        rank = row["ranks"][planted_name]
        return rank is not None and rank <= top and row["shortcuts"][planted_name]
    return not any(row["shortcuts"].values()) and all(
        rank is None or rank > top for rank in row["ranks"].values()
    )


def format_table(rows, planted_names):
    lines = [
        "| file | recipe | seed | test accuracy | rank of the word per class | marked a "
        "shortcut | goal met | top-10 vs random insertion | train s | --tokens s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        planted_name = planted_names[row["file"].rsplit("_", 1)[0]]
        ranks = ", ".join(f"{label}: {rank or '-'}" for label, rank in row["ranks"].items() if rank)
        marked = ", ".join(label for label, flag in row["shortcuts"].items() if flag) or "no"
        check = row["check"] or {}
        lines.append(
            f"| {row['file']} | {row['recipe']} | {row['seed']} | {100 * row['accuracy']:.2f} "
            f"| {ranks or '-'} | {marked} | {'yes' if verdict(row, planted_name) else 'NO'} | "
            f"{check.get('top_words', 0):.3f} vs {check.get('random_words', 0):.3f} | "
            f"{row['train_seconds']:.0f} | {row['tokens_seconds']:.0f} |"
        )
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    root = RESULTS / "shortcuts"
    root.mkdir(parents=True, exist_ok=True)
    rows, planted_names = [], dict(zip(args.datasets, args.planted_class, strict=True))
    for dataset, planted_name in planted_names.items():
        files, _ = write_files(dataset, args.examples, root, planted_name, args.variants)
        rows += [
            run_one(path, recipe, seed, root, args.reuse)
            for recipe in args.recipes
            for path in files.values()
            for seed in args.seeds
        ]
        print(format_table(rows[-1:], planted_names), flush=True)
    table = format_table(rows, planted_names)
    (RESULTS / "shortcuts.json").write_text(json.dumps(rows, indent=2) + "\n")
    (RESULTS / "shortcuts.md").write_text(table + "\n")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
