"""Compresses a finished run into a new run folder beside it: attention heads pruned, and
or weights quantized to int8.

Usage:
    python compress.py runs/default --prune-heads 0.25     # a quarter, least important first
    python compress.py runs/default --prune-heads 9 --order random --seed 1 --name default_r9
    python compress.py runs/default --prune-heads 0.5 --finetune-epochs 1
    python compress.py runs/default --int8                 # Keras' int8: about 0.26x the file
    python compress.py runs/default --prune-heads 0.25 --int8 --name default_small

`--prune-heads` takes a fraction in (0, 1) of all the heads (rounded up) or a count of
them. The heads go for real (their query, key, value and output kernels sliced,
`models.pruning`), so the new model is smaller and faster, and predicts what the old one
does with those heads masked.
`--order importance` (the default) removes the least important first, by the run's
`eval/validation/heads.json` (`evaluate.py --heads`), measured on 500 validation examples
when missing; `--order random` draws them with `--seed`. Every block keeps one head at
least. The new run, `<run>_pruned` or `--name`, holds config.yaml, labels.json,
model.keras and compress.json (what was removed, the original numbers of the heads kept)
and is never written over an existing folder: evaluate.py, predict.py and the attention
export work on it as on any run.
`--finetune-epochs E` then trains the pruned model E epochs on the run's training split,
by the run's own recipe (its optimizer, a schedule over E epochs, its early stopping; the
best epoch by its monitor is kept) and adds train.py's history.csv, logs and checkpoints;
interrupted, the same command resumes it.
`--int8` then quantizes the model with Keras (`model.quantize("int8")`: the embeddings, the
attention projections, the feed-forward layers and the head hold int8 weights and a scale
per output; docs/serving.md measures the accuracy, size and speed). The folder is
`<run>_int8` (`<run>_pruned_int8` with `--prune-heads`) unless `--name` says otherwise.

Exit codes: 0 done, 2 a bad argument, a missing or unreadable run, or a target folder that
exists.
"""

import argparse
import dataclasses
import json
import math
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

from data import DataError
from engine import cli
from engine.training import fitting
from run_folder import runs, saved_run

# Keras, models, the trainer and engine.evaluation load TensorFlow, which takes seconds: the
# functions import them, so that `main` reports a bad argument at once, before that wait.

HEADS_EXAMPLES = 500


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="compress.py", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a finished run folder")
    parser.add_argument(
        "--prune-heads",
        metavar="FRACTION|COUNT",
        help="a fraction in (0, 1) of all the heads, or a count of heads",
    )
    parser.add_argument(
        "--int8", action="store_true", help="quantize the weights to int8 (Keras' model.quantize)"
    )
    parser.add_argument(
        "--order",
        choices=("importance", "random"),
        default="importance",
        help="which heads go first (default: the least important)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --order random")
    parser.add_argument(
        "--name",
        help="the new run folder's name (default: <run>_pruned, <run>_int8 or <run>_pruned_int8)",
    )
    parser.add_argument(
        "--finetune-epochs",
        type=int,
        default=0,
        metavar="E",
        help="then train the pruned model E epochs on the training split (default 0: not at all)",
    )
    return parser.parse_args(argv)


def prune_amount(text):
    """`--prune-heads` as a count of heads (int) or a fraction of them in (0, 1) (float), or
    a ValueError with a one-line message.

    Example:
    >>> prune_amount("9"), prune_amount("0.25")
    (9, 0.25)
    """
    try:
        value = float(text)
    except ValueError:
        raise ValueError(
            f"--prune-heads {text}: give a fraction in (0, 1) or a count of heads"
        ) from None
    if value.is_integer() and value >= 1:
        return int(value)
    if 0 < value < 1:
        return value
    raise ValueError(f"--prune-heads {text}: give a fraction in (0, 1) or a count of 1 or more")


def heads_to_prune(amount, total):
    """How many of `total` heads `amount` (a `prune_amount`) is.

    Example:
    >>> heads_to_prune(0.25, 36), heads_to_prune(9, 36), heads_to_prune(0.1, 2)
    (9, 9, 1)
    """
    if isinstance(amount, int):
        return amount
    # Rounded up, so that a fraction takes one head at least (and 0.1 of 30 is 3).
    return math.ceil(amount * total - 1e-9)


def pruning_order(run, order, seed):
    """Every (layer, head) of the run, the first to prune first."""
    _, classifier = run.parts
    pairs = [
        (layer, head)
        for layer, count in enumerate(classifier.encoder.head_counts)
        for head in range(count)
    ]
    if order == "random":
        return [pairs[index] for index in np.random.default_rng(seed).permutation(len(pairs))]
    path = run.run_dir / runs.EVAL_DIR / runs.HEADS_SPLIT / "heads.json"
    if path.is_file():
        heads = json.loads(path.read_text())["heads"]
    else:
        from engine.evaluation.heads import measure_run_heads

        split = runs.HEADS_SPLIT
        print(f"{path}: missing; measuring the heads on {HEADS_EXAMPLES} {split} examples")
        texts, labels = run.load_split(split)
        heads = measure_run_heads(run, texts, labels, HEADS_EXAMPLES, split)["heads"]
    ranked = sorted(heads, key=lambda head: head["importance"])
    return [(head["layer"], head["head"]) for head in ranked]


def choose(order, count, counts):
    """The first `count` heads of `order` whose removal leaves every block a head."""
    left, chosen = list(counts), []
    for layer, head in order:
        if len(chosen) == count:
            break
        if left[layer] > 1:
            left[layer] -= 1
            chosen.append((layer, head))
    return chosen


def compress(run, target, amount=None, order="importance", seed=0, finetune_epochs=0, int8=False):
    """Writes the run with `amount` (a `prune_amount`, or None) of its heads pruned, then
    fine-tuned for `finetune_epochs`, then quantized to int8 if `int8`, into `target`
    (through `<target>.partial`, where an interrupted fine-tune of the same request
    resumes); returns its compress.json."""
    from models import build_end_to_end_model
    from models.trim_padding import TrimPadding

    vectorizer, classifier = run.parts
    report = {"source": str(run.run_dir), "int8": int8}
    if amount is not None:
        classifier = pruned(run, classifier, amount, order, seed, finetune_epochs, report)
    staging = staging_folder(target, report)
    for name in (runs.CONFIG_FILE, runs.LABELS_FILE, runs.THRESHOLDS_FILE):
        if (run.run_dir / name).exists():  # thresholds: a multi-label run's only
            shutil.copy2(run.run_dir / name, staging / name)
    runs.write_json(staging / runs.COMPRESS_FILE, report)
    if finetune_epochs:
        report["finetuned"] = finetune(run, classifier, finetune_epochs, staging)
        runs.write_json(staging / runs.COMPRESS_FILE, report)
    trim = any(isinstance(layer, TrimPadding) for layer in run.model.layers)
    model = build_end_to_end_model(vectorizer, classifier, name=run.model.name, trim_padding=trim)
    if int8:
        with warnings.catch_warnings():  # "Layer ... does not have a `quantize` method"
            warnings.filterwarnings("ignore", message=".*does not have a `quantize` method")
            model.quantize("int8")
    model.save(staging / runs.MODEL_FILE)
    fitting.finish_run(staging, target, run.config.output.keep_checkpoints)
    return report


def pruned(run, classifier, amount, order, seed, finetune_epochs, report):
    """The classifier with `amount` of its heads pruned; what was removed goes into
    `report`."""
    from models.pruning import kept_heads, pruned_classifier

    counts = classifier.encoder.head_counts
    count = heads_to_prune(amount, sum(counts))
    if count > sum(counts) - len(counts):
        raise ValueError(
            f"--prune-heads {amount} asks for {count} of the {sum(counts)} heads; "
            f"every block keeps one, so at most {sum(counts) - len(counts)} can go"
        )
    if finetune_epochs and run.config.dataset.streaming is True:
        raise ValueError(
            f"--finetune-epochs: {run.run_dir} streams its training data, which "
            "compress.py does not; prune without it, or train a smaller config"
        )
    pruned_heads = choose(pruning_order(run, order, seed), count, counts)
    kept = kept_heads(counts, pruned_heads)
    report.update(
        {
            "order": order,
            "seed": seed if order == "random" else None,
            "heads_before": sum(counts),
            "heads_after": sum(map(len, kept)),
            "pruned_heads": [list(pair) for pair in sorted(pruned_heads)],
            "kept_heads": kept,
            "finetune_epochs": finetune_epochs,
        }
    )
    return pruned_classifier(classifier, pruned_heads)


def staging_folder(target, report):
    """`<target>.partial`, kept when an interrupted run of the same request left it (its
    fine-tune resumes), else new."""
    staging = runs.partial_dir(target)
    path = staging / runs.COMPRESS_FILE
    if path.is_file() and json.loads(path.read_text()) == report:
        print(f"Resuming the interrupted fine-tune in {staging}")
        return staging
    if staging.exists():
        print(f"{staging}: left by an interrupted compress.py of another request; starting over")
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    return staging


def finetune(run, classifier, epochs, run_dir):
    """Trains `classifier` (shared, in place) `epochs` more on the run's training split by
    its recipe (optimizer, schedule and early stopping over those epochs; history, best
    checkpoint and resume in `run_dir`, as train.py's), restores the best epoch by the
    run's monitor; returns its validation and test metrics."""
    import keras

    from engine.training.trainer import build_trainer

    training = dataclasses.replace(run.config.training, epochs=epochs, attention_images=0)
    keras.utils.set_random_seed(training.seed)
    pipelines = run.pipelines()
    steps = fitting.epoch_steps(pipelines, training)
    trainer = build_trainer(classifier, training, steps)
    fitting.fit(
        trainer,
        pipelines,
        steps,
        training,
        run_dir,
        fitting.make_callbacks(training, None, run_dir, classifier),
        verbose=None,
    )
    scores = fitting.score_splits(classifier, pipelines, run.class_names, run.thresholds)
    return {
        "epochs": len(runs.read_history(run_dir)),
        **{
            f"{split}_accuracy": round(100 * metrics["accuracy"], 2)
            for split, metrics in scores.items()
        },
    }


def main(argv=None):
    args = parse_args(argv)
    fail = cli.error_reporter("compress.py")
    run_dir = Path(args.run_dir)
    if args.prune_heads is None and not args.int8:
        return fail("nothing to do: pass --prune-heads FRACTION|COUNT, --int8, or both")
    suffix = "_pruned" * (args.prune_heads is not None) + "_int8" * args.int8
    target = run_dir.parent / (args.name or f"{run_dir.name}{suffix}")
    problem = saved_run.run_dir_problem(run_dir)
    if problem:
        return fail(problem)
    if target.exists():
        return fail(f"{target} already exists: pass --name NAME for a new folder, or remove it")
    try:  # Before TensorFlow loads.
        amount = None if args.prune_heads is None else prune_amount(args.prune_heads)
    except ValueError as error:
        return fail(error)
    if args.finetune_epochs < 0 or (args.finetune_epochs and amount is None):
        return fail(
            f"--finetune-epochs {args.finetune_epochs}: give 0 (no fine-tune), or "
            "more with --prune-heads"
        )
    cli.start_tensorflow()
    try:
        run = saved_run.load_run(run_dir)
        report = compress(
            run, target, amount, args.order, args.seed, args.finetune_epochs, args.int8
        )
    except (runs.RunError, DataError, ValueError) as error:
        return fail(error)
    tuned, done = report.get("finetuned"), []
    if amount is not None:
        done.append(
            f"{report['heads_before']} -> {report['heads_after']} heads "
            f"({args.order} order)"
            + (
                f", fine-tuned {tuned['epochs']} epochs: validation {tuned['validation_accuracy']}%"
                if tuned
                else ""
            )
        )
    if args.int8:
        done.append("int8 weights")
    print(f"{target}: {'; '.join(done)}; evaluate it: python evaluate.py {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
