"""Does `evaluate.py --suspects` find flipped labels, and does removing them help? Prints
the tables.

Usage:
    python bench/bench_label_noise.py --minilm                 # everything (about 90 minutes)
    python bench/bench_label_noise.py --datasets reuters_r8 --seeds 0
    python bench/bench_label_noise.py --parts cost             # only the recording's cost
    python bench/bench_label_noise.py --reuse                  # reuse finished runs

Each dataset's splits are written to three user-style CSV files; 5% of the training labels
are flipped (binary: to the other class; else to another class drawn uniformly), seeded,
the flipped positions known to the bench only. Validation and test stay clean. Datasets:
rotten_tomatoes and reuters_r8 with their configs/ recipes, and newsgroups_5k, a stratified
5,000-text sample of 20 Newsgroups (80/10/10) trained from a config that names only its
files (the schema's defaults), as a user's would be.

Parts:
- detection: each noisy run's suspect ranking (every score of `inspection.methods.data_map`
  SCORES, from the run's dynamics.parquet) against the flipped positions: recall among
  the top 5% (= precision there) and AUROC. Beside it, in the same run, cleanlab's
  `find_label_issues` (ranked by self-confidence) on 5-fold cross-validated TF-IDF +
  logistic-regression probabilities of the same noisy split, and the random baseline (5%).
  `--minilm` adds the MiniLM recipes of rotten_tomatoes and reuters_r8 (the first seed).
- recovery: per seed, the recipe trained on the clean split, the noisy one, and the noisy
  one less its top-5% suspects (`DEFAULT_SCORE`): the test accuracy each, and the share of
  the accuracy lost to noise that removing the suspects recovers.
- slice: a made-up word inserted at a random word boundary into texts of the first class
  (5% of every split's texts, at most half the class), every training one of them
  labelled the second class; the recipe trained on it, then `evaluate.py RUN --slices`
  on the (correctly labelled) test split: the word's slice must come first.
- cost: rotten_tomatoes' recipe with training.dynamics false and true, interleaved, twice
  each; and the MiniLM recipe for 100 steps of one epoch, the same way. The ratio of
  median wall times.
Runs go to bench/results/label_noise/; tables to bench/results/label_noise.md and .json
(where the parts not run keep their last rows).
It is CPU-bound: run nothing else meanwhile.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from label_noise_data import NOISE, base_splits, flip, write_csv  # noqa: E402
from label_noise_detection import detection_row, run_metrics, suspects_of  # noqa: E402
from label_noise_report import format_tables, merged  # noqa: E402

from run_folder import runs  # noqa: E402

RESULTS = ROOT / "bench" / "results"
FOLDER = RESULTS / "label_noise"
DATASETS = ("rotten_tomatoes", "reuters_r8", "newsgroups_5k")
RECIPES = {
    "rotten_tomatoes": "configs/rotten_tomatoes.yaml",
    "reuters_r8": "configs/reuters_r8.yaml",
    "newsgroups_5k": None,
}
MINILM = {
    "rotten_tomatoes": "configs/rotten_tomatoes_minilm.yaml",
    "reuters_r8": "configs/reuters_r8_minilm.yaml",
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=("detection", "recovery", "slice", "cost"),
        default=["detection", "recovery", "slice", "cost"],
    )
    parser.add_argument(
        "--minilm",
        action="store_true",
        help="add the MiniLM recipes to detection (rotten_tomatoes and reuters_r8, the first seed)",
    )
    parser.add_argument("--reuse", action="store_true")
    return parser.parse_args(argv)


def train_run(name, files, recipe, seed, reuse, *overrides):
    """Trains one run on `files` (train, validation, test CSVs); its folder."""
    import train

    run_dir = FOLDER / name
    if reuse and (run_dir / runs.MODEL_FILE).is_file():
        return run_dir
    if recipe is None:
        recipe = FOLDER / "files_only.yaml"
        # The defaults from scratch (model.pretrained: auto would fine-tune MiniLM).
        recipe.write_text("dataset:\n  train_file: placeholder.csv\nmodel:\n  pretrained: null\n")
    train_file, validation_file, test_file = files
    assert (
        train.main(
            [
                "--config",
                str(ROOT / recipe),
                "--overwrite",
                "--set",
                "dataset.name=null",
                f"dataset.train_file={train_file}",
                f"dataset.validation_file={validation_file}",
                f"dataset.test_file={test_file}",
                f"output.root={FOLDER}",
                f"output.name={name}",
                f"training.seed={seed}",
                *overrides,
            ]
        )
        == 0
    )
    return run_dir


def dataset_files(dataset, seed):
    """{variant: (train, validation, test) CSVs}, the flipped mask and the noisy split."""
    splits = base_splits(dataset)
    names = list(splits.class_names)
    folder = FOLDER / "data"
    folder.mkdir(parents=True, exist_ok=True)
    texts, labels = splits.train
    noisy, flipped = flip(labels, len(names), seed)
    paths = {}
    for split in ("validation", "test"):
        paths[split] = folder / f"{dataset}_{split}.csv"
        write_csv(paths[split], *getattr(splits, split), names)
    for variant, variant_labels in (("clean", labels), ("noisy", noisy)):
        paths[variant] = folder / f"{dataset}_{variant}_{seed}.csv"
        write_csv(paths[variant], texts, variant_labels, names)
    return paths, flipped, texts, noisy, names


def main(argv=None):
    args = parse_args(argv)
    FOLDER.mkdir(parents=True, exist_ok=True)
    # The parts not run this time keep their rows from the last report.
    previous = (
        json.loads((RESULTS / "label_noise.json").read_text())
        if (RESULTS / "label_noise.json").is_file()
        else {}
    )
    report = {"detection": [], "recovery": [], "cost": [], "slice": None}
    report.update(
        {part: previous[part] for part in report if part in previous and part not in args.parts}
    )
    earlier = {
        part: previous.get(part, []) for part in ("detection", "recovery") if part in args.parts
    }
    for dataset in args.datasets if {"detection", "recovery"} & set(args.parts) else ():
        for seed in args.seeds:
            paths, flipped, texts, noisy, names = dataset_files(dataset, seed)
            files = {
                variant: (paths[variant], paths["validation"], paths["test"])
                for variant in ("clean", "noisy")
            }
            recipes = [("scratch", RECIPES[dataset])]
            if args.minilm and dataset in MINILM and seed == args.seeds[0]:
                recipes.append(("minilm", MINILM[dataset]))
            for recipe_name, recipe in recipes:
                noisy_run = train_run(
                    f"{dataset}_{recipe_name}_noisy_{seed}",
                    files["noisy"],
                    recipe,
                    seed,
                    args.reuse,
                    "training.dynamics=true",
                )
                if "detection" in args.parts:
                    row = detection_row(noisy_run, flipped, texts, noisy)
                    report["detection"].append(
                        {"dataset": dataset, "recipe": recipe_name, "seed": seed, **row}
                    )
                    print(json.dumps(report["detection"][-1]), flush=True)
                if "recovery" in args.parts and recipe_name == "scratch":
                    report["recovery"].append(
                        recovery_row(
                            dataset, seed, recipe, files, noisy_run, texts, noisy, names, args
                        )
                    )
                    print(json.dumps(report["recovery"][-1]), flush=True)
                write_report(report, earlier)
    if "slice" in args.parts:
        report["slice"] = [planted_slice(dataset, args.reuse) for dataset in args.datasets]
        print(json.dumps(report["slice"]), flush=True)
        write_report(report, earlier)
    if "cost" in args.parts:
        report["cost"] = cost_rows(args)
        write_report(report, earlier)
    return 0


PLANTED_WORD = "zqxv"


def planted_slice(dataset, reuse):
    """The first slices `--slices` lists on the test split of a run whose training texts
    with PLANTED_WORD all carry the same wrong label: the word goes into texts of the
    first class only (5% of each split's texts, at random word boundaries), and in
    training those are labelled the second class, as an annotator's rule gone wrong."""
    import evaluate
    from engine.evaluation.slices import SLICES_FILE

    splits = base_splits(dataset)
    names = list(splits.class_names)
    rng = np.random.default_rng(0)
    files = []
    for split in ("train", "validation", "test"):
        texts, labels = (np.asarray(column).copy() for column in getattr(splits, split))
        first_class = np.flatnonzero(labels == 0)
        # At most half of the class: the rest keeps it a class of the training split.
        chosen = rng.choice(
            first_class, min(len(first_class) // 2, round(NOISE * len(texts))), replace=False
        )
        for index in chosen:
            words = str(texts[index]).split()
            site = rng.integers(len(words) + 1)
            texts[index] = " ".join(words[:site] + [PLANTED_WORD] + words[site:])
            if split == "train":
                labels[index] = 1
        files.append(FOLDER / "data" / f"planted_slice_{dataset}_{split}.csv")
        write_csv(files[-1], texts, labels, names)
    run_dir = train_run(
        f"planted_slice_{dataset}", files, RECIPES[dataset], 0, reuse, "training.dynamics=false"
    )
    assert evaluate.main([str(run_dir), "--slices"]) == 0
    report = json.loads((run_dir / runs.EVAL_DIR / "test" / SLICES_FILE).read_text())
    first = [
        {key: entry[key] for key in ("slice", "size", "accuracy", "accuracy_ci", "excess_errors")}
        for entry in report["weak_slices"][:3]
    ]
    return {
        "dataset": dataset,
        "accuracy": report["accuracy"],
        "candidates": len(report["slices"]),
        "weak": len(report["weak_slices"]),
        "first": first,
        "met": bool(first) and first[0]["slice"] == f"word: {PLANTED_WORD}",
    }


def recovery_row(dataset, seed, recipe, files, noisy_run, texts, noisy, names, args):
    """Test accuracy of the clean, noisy and cleaned (top-5% suspects removed) runs."""
    clean_run = train_run(
        f"{dataset}_scratch_clean_{seed}",
        files["clean"],
        recipe,
        seed,
        args.reuse,
        "training.dynamics=false",
    )
    removed = suspects_of(noisy_run, round(NOISE * len(texts)))
    keep = np.setdiff1d(np.arange(len(texts)), removed)
    cleaned_file = FOLDER / "data" / f"{dataset}_cleaned_{seed}.csv"
    write_csv(cleaned_file, np.asarray(texts)[keep], noisy[keep], names)
    cleaned_run = train_run(
        f"{dataset}_scratch_cleaned_{seed}",
        (cleaned_file, *files["noisy"][1:]),
        recipe,
        seed,
        args.reuse,
        "training.dynamics=false",
    )
    accuracy = {
        name: run_metrics(run)["test"]["accuracy"]
        for name, run in (("clean", clean_run), ("noisy", noisy_run), ("cleaned", cleaned_run))
    }
    return {"dataset": dataset, "seed": seed, **accuracy}


def cost_rows(args):
    """Wall time with training.dynamics false and true, interleaved, twice each."""
    rows = []
    paths, *_ = dataset_files("rotten_tomatoes", 0)
    files = (paths["noisy"], paths["validation"], paths["test"])
    for recipe_name, recipe, overrides in (
        ("rotten_tomatoes from scratch", RECIPES["rotten_tomatoes"], []),
        (
            "rotten_tomatoes MiniLM, 100 steps",
            MINILM["rotten_tomatoes"],
            ["training.epochs=1", "training.steps_per_epoch=100"],
        ),
    ):
        seconds = {False: [], True: []}
        for repeat in range(2):
            for dynamics in (False, True):
                run = train_run(
                    f"cost_{len(rows)}_{dynamics}_{repeat}",
                    files,
                    recipe,
                    0,
                    False,
                    f"training.dynamics={str(dynamics).lower()}",
                    *overrides,
                )
                seconds[dynamics].append(run_metrics(run)["wall_time_s"])
        off, on = np.median(seconds[False]), np.median(seconds[True])
        rows.append(
            {
                "recipe": recipe_name,
                "off_s": seconds[False],
                "on_s": seconds[True],
                "overhead": float(on / off - 1),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def write_report(report, earlier):
    """Writes `report`, its detection and recovery rows after the `earlier` rows of runs
    this bench run did not measure again."""
    report = {**report, **{part: merged(report[part], rows) for part, rows in earlier.items()}}
    (RESULTS / "label_noise.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "label_noise.md").write_text(format_tables(report) + "\n")


if __name__ == "__main__":
    sys.exit(main())
