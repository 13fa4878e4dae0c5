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
and .png) and kept by a later evaluation without its flag:
- `--faithfulness N` (500): every attribution method's faithfulness (ERASER's AOPC); the best
  becomes `predict.py --explain`'s default (docs/explanations.md);
- `--heads N` (500): every attention head: what it looks at, its importance and the model
  without it (docs/heads.md);
- `--tokens N` (1000): per class, the words the model relies on (`--method`, `--min-count`),
  with the training split's p(class | word) and each word's measured insertion and deletion
  effect (docs/dataset_inspection.md);
- `--compare OTHER_RUN`: the two runs on the same texts, into `compare_<other>.json`;
- `--slices` (every example): the weak slices, words, length bands, labels, digits, URLs,
  capitals and `dataset.slice_columns` values where accuracy is below the whole's after a
  Bonferroni correction, into `slices.json` and `.md` (docs/data_quality.md).
`--suspects K` (200) ranks the training labels by the run's training dynamics into
`eval/train/` (suspects.csv, data_map.json and .png; docs/data_quality.md).

Exit codes: 0 done, 2 missing or unreadable run folder, model or data, bad example ids,
an empty texts file, an export in the way, runs with different classes to compare, a
`dataset.slice_columns` column not in the data, or `--suspects` without training dynamics.
"""

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

from config import ATTRIBUTION_METHODS
from engine import cli, runs, saved_run

# data, models, inspection and reports load TensorFlow, pandas and scikit-learn, which takes
# seconds: the functions import them, so that `main` rejects bad arguments at once.


@dataclasses.dataclass
class EvaluationReport:
    """One evaluated (run, data): the metrics, where the reports went, what was scored."""

    run_dir: Path
    data_name: str
    output_dir: Path
    metrics: dict
    texts: np.ndarray = dataclasses.field(repr=False)
    labels: np.ndarray = dataclasses.field(repr=False)
    probabilities: np.ndarray = dataclasses.field(repr=False)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="evaluate.py",
        description="Evaluate the saved model of one or more train.py run folders.",
        epilog="Example: python evaluate.py runs/default --split validation",
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="train.py run folder(s)")
    parser.add_argument(
        "--split", choices=("test", "validation"), default="test",
        help="split of the run's dataset to evaluate on (default: test)",
    )  # fmt: skip
    parser.add_argument(
        "--data", nargs="+", action="extend", default=[], metavar="FILE",
        help="labelled CSV/TSV/JSONL/Parquet file(s) to evaluate on instead of a split",
    )  # fmt: skip
    parser.add_argument("--batch-size", type=int, default=256, help="prediction batch size")
    parser.add_argument(
        "--worst", type=int, default=20, help="how many confident mistakes to list (default 20)"
    )
    parser.add_argument(
        "--faithfulness", type=int, nargs="?", const=500, metavar="N",
        help="also measure every explanation method's faithfulness on the first N "
             "examples (default 500)",
    )  # fmt: skip
    parser.add_argument(
        "--heads", type=int, nargs="?", const=500, metavar="N",
        help="also measure every attention head (what it looks at, its importance, the "
             "model without it) on the first N examples (default 500)",
    )  # fmt: skip
    parser.add_argument(
        "--tokens", type=int, nargs="?", const=1000, metavar="N",
        help="also rank the words the model relies on per class, with their measured "
             "insertion and deletion effects, over the first N examples (default 1000)",
    )  # fmt: skip
    parser.add_argument(
        "--compare", metavar="OTHER_RUN",
        help="also compare with another run on the same texts (agreement, accuracy "
             "difference, disagreements, attributions)",
    )  # fmt: skip
    parser.add_argument(
        "--suspects", type=int, nargs="?", const=200, metavar="K",
        help="also rank the training labels by the training dynamics: the K most suspect "
             "into eval/train/suspects.csv, with the data map (default 200)",
    )  # fmt: skip
    parser.add_argument(
        "--slices", action="store_true",
        help="also find the weak slices: words, length bands, labels, digits, URLs, "
             "capitals and dataset.slice_columns values with accuracy below the whole's",
    )  # fmt: skip
    parser.add_argument(
        "--method", choices=ATTRIBUTION_METHODS, metavar="NAME",
        help="the attribution method of --tokens and --compare (default: "
             "conservative_gradient_x_input)",
    )  # fmt: skip
    parser.add_argument(
        "--min-count", type=int, default=20, metavar="N",
        help="--tokens and --compare rank the words of at least N examples, --slices "
             "measures slices of at least N (default 20)",
    )  # fmt: skip
    attention = parser.add_mutually_exclusive_group()
    attention.add_argument(
        "--export-attention", type=int, metavar="N",
        help="also export the attention of the first N evaluated examples to RUN_DIR/attention/",
    )  # fmt: skip
    attention.add_argument(
        "--export-attention-ids", type=int, nargs="+", metavar="ID",
        help="also export the attention of these examples (positions in the evaluated data)",
    )  # fmt: skip
    attention.add_argument(
        "--texts-file", metavar="FILE",
        help=f"export the attention of these texts, no evaluation: {cli.TEXTS_FILE_HELP}",
    )  # fmt: skip
    parser.add_argument(
        "--out", metavar="DIR",
        help="the export's folder (default: RUN_DIR/attention/<split or file stem>/)",
    )  # fmt: skip
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an export already in that folder")
    parser.add_argument(
        "--methods", nargs="+", choices=ATTRIBUTION_METHODS, metavar="NAME",
        help="the attribution methods an export stores (default: all; integrated_gradients "
             "and leave_one_out cost 32 and one pass per token each): "
             + ", ".join(ATTRIBUTION_METHODS),
    )  # fmt: skip
    parser.add_argument(
        "--viewer-examples", type=int, default=runs.VIEWER_EXAMPLES, metavar="N",
        help=f"examples in the export's viewer, the first ones (default {runs.VIEWER_EXAMPLES})",
    )  # fmt: skip
    parser.add_argument(
        "--heatmaps", type=int, default=runs.HEATMAP_EXAMPLES, metavar="N",
        help="examples that get heatmap PNGs and BertViz files, the first ones "
             f"(default {runs.HEATMAP_EXAMPLES})",
    )  # fmt: skip
    return parser.parse_args(argv)


def export_source(args, report_name=None) -> str:
    """The export folder's name: the split, or the data or texts file's stem."""
    if args.texts_file is not None:
        return "stdin" if args.texts_file == "-" else Path(args.texts_file).stem
    return report_name


def evaluate_run(run, split="test", data_files=(), batch_size=256, worst=20, requests=None):
    """Evaluates one `saved_run.Run` on `split`, or on each of `data_files` when given.

    `requests`: what else to measure on each (`evaluation.measurements.Requests`:
    faithfulness, heads, tokens, comparisons, slices); measurements of the folder not asked
    for again are kept.

    Returns:
        One `EvaluationReport` per evaluated data set; its reports are in
        `RUN_DIR/eval/<name>/`, each folder replaced as a whole.

    Raises:
        DataError: the data cannot be loaded or has labels the model does not know.
    """
    from data import load_labelled_file
    from engine.evaluation.compare import check_same_labels
    from engine.evaluation.measurements import Requests, carry_over, measure
    from engine.reports import write_reports
    from models import predict_texts

    requests = requests or Requests()
    for other in requests.others:  # before any work
        check_same_labels(run, other)
    dataset = run.config.dataset
    if data_files:
        sources = [(Path(path).stem, path, lambda path=path: load_labelled_file(
            path, run.class_names, dataset.text_column, dataset.label_column))
            for path in data_files]
    else:
        sources = [(split, None, lambda: run.load_split(split))]
    reports = []
    for name, data_file, load in sources:
        texts, labels = load()
        probabilities = predict_texts(run.model, texts, batch_size)
        output_dir = run.run_dir / runs.EVAL_DIR / name
        with runs.staged_folder(output_dir) as staging:
            metrics = write_reports(staging, texts, labels, probabilities, run.class_names,
                                    worst)
            measure(staging, run, name, texts, labels, probabilities, requests, data_file)
            carry_over(output_dir, staging)
        reports.append(EvaluationReport(run.run_dir, name, output_dir, metrics, texts, labels,
                                        probabilities))
    return reports


def format_reports(reports) -> str:
    """One row per (run, data): the headline table, side by side when there are several."""
    from engine.reports import format_table

    keys = ("accuracy", "macro_f1", "weighted_f1", "loss", "num_examples")
    table = format_table([
        {"run": str(report.run_dir), "data": report.data_name,
         **{key: report.metrics[key] for key in keys}}
        for report in reports
    ])  # fmt: skip
    return "\n".join([table, ""] + [f"reports: {report.output_dir}/" for report in reports])


def main(argv=None):
    args = parse_args(argv)
    fail = cli.error_reporter("evaluate.py")
    export = args.export_attention is not None or args.export_attention_ids is not None
    if args.export_attention is not None and args.export_attention < 1:
        return fail(f"--export-attention must be at least 1, got {args.export_attention}")
    for flag in ("viewer_examples", "heatmaps"):
        if getattr(args, flag) < 0:
            return fail(f"--{flag.replace('_', '-')} must be 0 or more, got {getattr(args, flag)}")
    for flag in ("faithfulness", "heads", "tokens", "suspects", "min_count"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            return fail(f"--{flag.replace('_', '-')} must be at least 1, got "
                        f"{getattr(args, flag)}")
    for flag in ("faithfulness", "heads", "tokens", "compare", "suspects", "slices"):
        if getattr(args, flag) and args.texts_file is not None:
            return fail(f"--{flag} needs labelled data to evaluate: drop --texts-file")
    if args.method and not (args.tokens or args.compare):
        return fail("--method is the attribution method of --tokens and --compare: add one, "
                    "or --methods for an attention export")
    if export and len(args.data) > 1:
        return fail("--export-attention exports one data set: pass a single --data file")
    if args.texts_file is not None and args.data:
        return fail("--texts-file has no labels to evaluate: drop --data, or evaluate it "
                    "without --texts-file")
    exporting = export or args.texts_file is not None
    if not exporting and (args.out or args.overwrite or args.methods):
        return fail("--out, --overwrite and --methods are for an attention export: add "
                    "--export-attention N, --export-attention-ids or --texts-file")
    if args.out and len(args.run_dirs) > 1:
        return fail("--out names one export folder: give one RUN_DIR")
    problems = [cli.missing_input("--data", path) for path in args.data]
    problems += [cli.missing_input("--texts-file", args.texts_file)]
    problems += [saved_run.run_dir_problem(run_dir) for run_dir in args.run_dirs]
    problems += [saved_run.run_dir_problem(args.compare) if args.compare else None]
    problems += [saved_run.dynamics_problem(run_dir) for run_dir in args.run_dirs if args.suspects]
    if any(problems):
        return fail(next(problem for problem in problems if problem))
    cli.start_tensorflow()
    from data import DataError, read_texts_file
    from engine import evaluation
    from engine.evaluation.measurements import Requests, summaries
    from engine.evaluation.suspects import suspects_report, suspects_summary

    options = {"overwrite": args.overwrite, "viewer_examples": args.viewer_examples,
               "methods": args.methods,
               "heatmap_examples": args.heatmaps, "verbose": 1 if sys.stdout.isatty() else 0}
    reports, viewers, suspects = [], [], []
    try:
        texts = read_texts_file(args.texts_file) if args.texts_file is not None else None
        if args.export_attention_ids is not None:
            evaluation.check_example_ids(args.export_attention_ids)
        requests = Requests(args.faithfulness, args.heads, args.tokens,
                            [saved_run.load_run(args.compare)] if args.compare else [],
                            min_count=args.min_count, slices=args.slices,
                            **({"method": args.method} if args.method else {}))
        for run_dir in args.run_dirs:
            # The export's folder is checked before any work: nothing is replaced unasked.
            name = export_source(args, Path(args.data[0]).stem if args.data else args.split)
            out_dir = evaluation.export_dir(run_dir, name, args.out)
            if exporting:
                evaluation.check_export_target(out_dir, args.overwrite)
            run = saved_run.load_run(run_dir)
            if texts is not None:
                viewers.append(evaluation.export_texts_attention(
                    run, texts, args.texts_file, out_dir, **options))
                continue
            run_reports = evaluate_run(run, args.split, args.data, args.batch_size, args.worst,
                                       requests)
            reports += run_reports
            if args.suspects:
                suspects.append((run_dir, suspects_report(run, args.suspects)))
            if export:
                viewers.append(evaluation.export_evaluation_attention(
                    run, run_reports[0], out_dir, args.export_attention,
                    args.export_attention_ids, **options))
    except (runs.RunError, DataError, evaluation.ExportError) as error:
        return fail(error)
    if reports:
        print(format_reports(reports))
    for report in reports:
        for title, table in summaries(report.output_dir, requests):
            print(f"\n{title}, {report.run_dir} on {report.data_name}:\n{table.rstrip()}")
    for run_dir, folder in suspects:
        print(f"\nthe most suspect training labels of {run_dir} (all that were ranked, and "
              f"the data map, in {folder}/):\n{suspects_summary(folder)}")
    for viewer in viewers:
        print(f"attention viewer: {viewer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
