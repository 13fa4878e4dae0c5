"""Evaluates saved runs: metrics, per-class table, confusion matrix, predictions, mistakes.

Usage:
    python evaluate.py runs/default                      # the test split
    python evaluate.py runs/default --split validation
    python evaluate.py runs/default --data reviews.csv   # your own labelled file(s)
    python evaluate.py runs/reuters_r8 runs/reuters_r8_4layers   # side-by-side comparison

Loads `RUN_DIR/model.keras` in safe mode (raw strings in, probabilities out) and writes
`RUN_DIR/eval/<split or file stem>/`: metrics.json (accuracy, macro and weighted F1, loss),
per_class.csv, confusion_matrix.csv and .png, predictions.csv and worst_mistakes.csv.
`--data` files use the run's text/label column names and its class names as labels.

Exit codes: 0 done, 2 missing or unreadable run folder, model or data.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="evaluate.py",
        description="Evaluate the saved model of one or more train.py run folders.",
        epilog="Example: python evaluate.py runs/default --split validation",
    )
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="train.py run folder(s)")
    parser.add_argument(
        "--split",
        choices=("test", "validation"),
        default="test",
        help="split of the run's dataset to evaluate on (default: test)",
    )
    parser.add_argument(
        "--data",
        nargs="+",
        action="extend",
        default=[],
        metavar="FILE",
        help="labelled CSV/TSV/JSONL/Parquet file(s) to evaluate on instead of a split",
    )
    parser.add_argument("--batch-size", type=int, default=256, help="prediction batch size")
    parser.add_argument(
        "--worst", type=int, default=20, help="how many confident mistakes to list (default 20)"
    )
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    from keras_attention_lab.config import ConfigError
    from keras_attention_lab.data import DataError
    from keras_attention_lab.evaluation import EvaluationError, evaluate_run, format_reports

    reports = []
    try:
        for run_dir in args.run_dirs:
            reports += evaluate_run(
                run_dir, args.split, args.data, batch_size=args.batch_size, worst=args.worst
            )
    except (EvaluationError, DataError, ConfigError) as error:
        print(f"evaluate.py: error: {error}", file=sys.stderr)
        return 2
    print(format_reports(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
