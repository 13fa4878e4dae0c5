"""Evaluates saved runs: metrics, per-class table, confusion matrix, predictions, mistakes.

Usage:
    python evaluate.py runs/default                      # the test split
    python evaluate.py runs/default --split validation
    python evaluate.py runs/default --data reviews.csv   # your own labelled file(s)
    python evaluate.py runs/reuters_r8 runs/reuters_r8_4layers   # side-by-side comparison
    python evaluate.py runs/default --export-attention 8          # + attention of 8 examples
    python evaluate.py runs/default --split validation --export-attention-ids 3 17 42
    python evaluate.py runs/default --texts-file my.txt           # attention only, no labels
    python evaluate.py runs/default --split validation --faithfulness 500   # explanations measured
    python evaluate.py runs/default --split validation --heads 500   # every attention head
    python evaluate.py runs/default --tokens 1000      # the words the model relies on
    python evaluate.py runs/default --compare runs/default_int8     # two models compared
    python evaluate.py runs/default --suspects 200     # the training labels that look wrong
    python evaluate.py runs/default --slices           # where the model fails

Loads `RUN_DIR/model.keras` in safe mode (raw strings in, probabilities out) and writes
`RUN_DIR/eval/<split or file stem>/`: metrics.json (accuracy, macro and weighted F1, loss),
per_class.csv, confusion_matrix.csv and .png, predictions.csv and worst_mistakes.csv.
`--data` files use the run's text/label column names and its class names as labels.

`--export-attention N` (the first N examples) or `--export-attention-ids ID ...` (positions
in the evaluated data) also writes their attention to `RUN_DIR/attention/<split or file
stem>/` (format: docs/attention_format.md; offline viewer: index.html), or to `--out DIR`.
`--texts-file FILE` (one text per line, no labels; example ids are line numbers) writes only
that export, to `RUN_DIR/attention/<file stem>/`, without evaluating. An export already
there is kept: the command stops unless `--overwrite`. `--viewer-examples N` and
`--heatmaps N` set how many of the first examples the viewer shows and get heatmaps. The
export stores every attribution method's scores (`--methods NAME ...` fewer: Integrated
Gradients and leave-one-out cost 32 passes and one pass per token of each example).

Measurements over the first N evaluated examples, each into `eval/<split>/` (.json, .md,
and .png) and kept by a later evaluation without its flag of the same data (`data.json`
records what the folder's evaluation read; other data keeps none, and says so):
- `--faithfulness N` (500): every attribution method's faithfulness (ERASER's AOPC); the best
  becomes `predict.py --explain`'s default (docs/explanations.md);
- `--heads N` (500): every attention head: what it looks at, its importance and the model
  without it (docs/heads.md);
- `--tokens N` (1000): per class, the words the training data ties to it, ranked by how
  much the model relies on each (inserted into texts of other classes, against random
  words), shortcuts marked (`--min-count`, `--method`; docs/dataset_inspection.md);
- `--compare OTHER_RUN`: the two runs on the same texts, into `compare_<other>-<hash>.json`;
- `--slices` (every example): the weak slices, words, length bands, labels, digits, URLs,
  capitals and `dataset.slice_columns` values whose accuracy is below the rest's (Fisher's
  exact test, Bonferroni-corrected), into `slices.json` and `.md` (docs/data_quality.md).
`--calibrate` first fits a temperature on the validation split of a run trained without
one (`training.calibrate: false`, or before it) and folds it into a new model.keras
(docs/evaluation.md); every evaluation writes ece, brier, reliability.png and coverage.csv.
`--suspects K` (200) ranks the training labels by the run's training dynamics into
`eval/train/` (suspects.csv, data_map.json and .png; docs/data_quality.md).

Exit codes: 0 done, 2 missing or unreadable run folder, model or data, bad example ids,
an empty texts file, an export in the way, runs with different classes to compare, a
`dataset.slice_columns` column not in the data, or `--suspects` without training dynamics.
"""

import sys

from config import ATTRIBUTION_METHODS
from engine import cli
from engine.cli import OneLineErrorParser, UsageError, at_least
from run_folder import runs, saved_run

# data and engine.evaluation (the evaluation itself: its run_evaluation.py) load TensorFlow,
# pandas and scikit-learn, which takes seconds: `main` imports them once the arguments
# hold, so that it rejects bad ones at once.

# The measurements of labelled data: a texts file has none.
LABELLED_ONLY = ("faithfulness", "heads", "tokens", "compare", "suspects", "slices")
# Flag: (N when the flag comes alone, what it measures on the first N evaluated examples).
COUNTED = {
    "--faithfulness": (500, "every explanation method's faithfulness"),
    "--heads": (500, "every attention head: what it looks at, its importance, the model "
                     "without it"),
    "--tokens": (1000, "per class, the words the model relies on, with their measured "
                       "insertion and deletion effects"),
}  # fmt: skip


def parse_args(argv):
    parser = OneLineErrorParser(
        prog="evaluate.py",
        description="Evaluate the saved model of one or more train.py run folders.",
        epilog="Example: python evaluate.py runs/default --split validation",
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="train.py run folder(s)")
    data = parser.add_argument_group("what to evaluate")
    data.add_argument("--split", choices=("test", "validation"), default="test",
                      help="split of the run's dataset to evaluate on (default: test)")  # fmt: skip
    data.add_argument(
        "--data", nargs="+", action="extend", default=[], metavar="FILE",
        help="labelled CSV/TSV/JSONL/Parquet file(s) to evaluate on instead of a split",
    )  # fmt: skip
    data.add_argument("--batch-size", type=at_least(1), default=256, help="prediction batch size")
    data.add_argument("--worst", type=at_least(0), default=20,
                      help="how many confident mistakes to list (default 20)")  # fmt: skip
    add_measurement_arguments(parser.add_argument_group("measurements, each into eval/<split>/"))
    add_export_arguments(parser.add_argument_group("attention export (docs/attention_format.md)"))
    return parser.parse_args(argv)


def add_measurement_arguments(group):
    for flag, (const, what) in COUNTED.items():
        group.add_argument(
            flag, type=at_least(1), nargs="?", const=const, metavar="N",
            help=f"also measure {what}, on the first N examples (default {const})",
        )  # fmt: skip
    group.add_argument(
        "--compare", metavar="OTHER_RUN",
        help="also compare with another run on the same texts (agreement, accuracy "
             "difference, disagreements, attributions)",
    )  # fmt: skip
    group.add_argument(
        "--suspects", type=at_least(1), nargs="?", const=200, metavar="K",
        help="also rank the training labels by the training dynamics: the K most suspect "
             "into eval/train/suspects.csv, with the data map (default 200)",
    )  # fmt: skip
    group.add_argument(
        "--calibrate", action="store_true",
        help="first fit a temperature on validation for a run trained without one, folded "
             "into a new model.keras (docs/evaluation.md)",
    )  # fmt: skip
    group.add_argument(
        "--slices", action="store_true",
        help="also find the weak slices: words, length bands, labels, digits, URLs, "
             "capitals and dataset.slice_columns values with accuracy below the rest's",
    )  # fmt: skip
    group.add_argument(
        "--method", choices=ATTRIBUTION_METHODS, metavar="NAME",
        help="the attribution method of --tokens and --compare (default: "
             "conservative_gradient_x_input)",
    )  # fmt: skip
    group.add_argument(
        "--min-count", type=at_least(1), default=20, metavar="N",
        help="--tokens ranks the words of at least N training texts, --compare those of "
             "N examples, --slices measures slices of at least N (default 20)",
    )  # fmt: skip


def add_export_arguments(group):
    which = group.add_mutually_exclusive_group()
    which.add_argument(
        "--export-attention", type=at_least(1), metavar="N",
        help="also export the attention of the first N evaluated examples to RUN_DIR/attention/",
    )  # fmt: skip
    which.add_argument(
        "--export-attention-ids", type=int, nargs="+", metavar="ID",
        help="also export the attention of these examples (positions in the evaluated data)",
    )  # fmt: skip
    which.add_argument(
        "--texts-file", metavar="FILE",
        help=f"export the attention of these texts, no evaluation: {cli.TEXTS_FILE_HELP}",
    )  # fmt: skip
    group.add_argument(
        "--out", metavar="DIR",
        help="the export's folder (default: RUN_DIR/attention/<split or file stem>/)",
    )  # fmt: skip
    group.add_argument("--overwrite", action="store_true",
                       help="replace an export already in that folder")  # fmt: skip
    group.add_argument(
        "--methods", nargs="+", choices=ATTRIBUTION_METHODS, metavar="NAME",
        help="the attribution methods an export stores (default: all; integrated_gradients "
             "and leave_one_out cost 32 and one pass per token each): "
             + ", ".join(ATTRIBUTION_METHODS),
    )  # fmt: skip
    group.add_argument(
        "--viewer-examples", type=at_least(0), default=runs.VIEWER_EXAMPLES, metavar="N",
        help=f"examples in the export's viewer, the first ones (default {runs.VIEWER_EXAMPLES})",
    )  # fmt: skip
    group.add_argument(
        "--heatmaps", type=at_least(0), default=runs.HEATMAP_EXAMPLES, metavar="N",
        help="examples that get heatmap PNGs and BertViz files, the first ones "
             f"(default {runs.HEATMAP_EXAMPLES})",
    )  # fmt: skip


def flag_conflict(args) -> str | None:
    """The first rule between flags that argparse cannot state (a flag that needs another,
    or a single value) that `args` breaks; None when all hold."""
    export = args.export_attention is not None or args.export_attention_ids is not None
    labelled = [flag for flag in LABELLED_ONLY if getattr(args, flag)]
    if args.texts_file is not None and labelled:
        return f"--{labelled[0]} needs labelled data to evaluate: drop --texts-file"
    if args.texts_file is not None and args.data:
        return (
            "--texts-file has no labels to evaluate: drop --data, or evaluate it without "
            "--texts-file"
        )
    if args.method and not (args.tokens or args.compare):
        return (
            "--method is the attribution method of --tokens and --compare: add one, or "
            "--methods for an attention export"
        )
    if export and len(args.data) > 1:
        return "--export-attention exports one data set: pass a single --data file"
    if not (export or args.texts_file) and (args.out or args.overwrite or args.methods):
        return (
            "--out, --overwrite and --methods are for an attention export: add "
            "--export-attention N, --export-attention-ids or --texts-file"
        )
    if args.out and len(args.run_dirs) > 1:
        return "--out names one export folder: give one RUN_DIR"
    return None


def missing_input(args) -> str | None:
    """The first input named on the command line that is not there, or None."""
    problems = [cli.missing_input("--data", path) for path in args.data]
    problems += [cli.missing_input("--texts-file", args.texts_file)]
    problems += [saved_run.run_dir_problem(run_dir) for run_dir in args.run_dirs]
    problems += [saved_run.run_dir_problem(args.compare) if args.compare else None]
    if args.suspects:
        problems += [saved_run.dynamics_problem(run_dir) for run_dir in args.run_dirs]
    return next((problem for problem in problems if problem), None)


def main(argv=None):
    fail = cli.error_reporter("evaluate.py")
    try:
        args = parse_args(argv)
    except UsageError as error:
        return fail(error)
    problem = flag_conflict(args) or missing_input(args)
    if problem:
        return fail(problem)
    cli.start_tensorflow()
    from data import DataError, read_texts_file
    from engine.evaluation import ExportError, ExportRequest, export_name
    from engine.evaluation.calibrate_run import calibrate_run
    from engine.evaluation.measurements import Requests
    from engine.evaluation.run_evaluation import evaluate_runs, print_results

    options = {"overwrite": args.overwrite, "viewer_examples": args.viewer_examples,
               "heatmap_examples": args.heatmaps, "methods": args.methods,
               "verbose": 1 if sys.stdout.isatty() else 0}  # fmt: skip
    try:
        if args.calibrate:
            for run_dir in args.run_dirs:
                print(calibrate_run(saved_run.load_run(run_dir)))
        texts = read_texts_file(args.texts_file) if args.texts_file is not None else None
        export = ExportRequest(
            export_name(args.split, args.data, args.texts_file), args.export_attention,
            args.export_attention_ids, args.texts_file, texts, args.out, options,
        )  # fmt: skip
        requests = Requests(
            args.faithfulness, args.heads, args.tokens,
            [saved_run.load_run(args.compare)] if args.compare else [],
            min_count=args.min_count, slices=args.slices,
            **({"method": args.method} if args.method else {}),
        )  # fmt: skip
        results = evaluate_runs(
            args.run_dirs, requests, export, args.suspects, split=args.split,
            data_files=args.data, batch_size=args.batch_size, worst=args.worst,
        )  # fmt: skip
    except (runs.RunError, DataError, ExportError) as error:
        return fail(error)
    print_results(results, requests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
