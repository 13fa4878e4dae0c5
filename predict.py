"""Predicts the class of raw texts with a trained run, optionally explained by attention rollout.

Usage:
    python predict.py runs/default "a wonderful, moving film" "dull and far too long"
    python predict.py runs/default --file texts.txt          # one text per line ("-": stdin)
    python predict.py runs/default "a wonderful film" --explain --top 5
    python predict.py runs/default --file texts.txt --json > predictions.json

Loads `RUN_DIR/model.keras` in safe mode and prints, per text, the predicted label and the
class probabilities. `--explain` adds the text's tokens ranked by attention rollout
importance (Abnar & Zuidema, 2020), computed by the run's attention model on the same
weights; `--json` prints one JSON document instead of tables.

Exit codes: 0 done, 2 missing or unreadable run folder or model, no text or an empty one,
an unreadable or empty texts file.
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="predict.py",
        description="Predict the class of raw texts with the saved model of a train.py run.",
        epilog='Example: python predict.py runs/default "a wonderful film" --explain',
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="train.py run folder")
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="texts to classify")
    parser.add_argument(
        "--file", metavar="FILE", help='texts file, one text per line ("-" reads stdin)'
    )
    parser.add_argument(
        "--explain", action="store_true", help="rank each text's tokens by attention rollout"
    )
    parser.add_argument(
        "--top", type=int, default=10, metavar="K",
        help="with --explain, how many tokens to list (default 10)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--batch-size", type=int, default=256, help="prediction batch size")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)

    def fail(message):
        print(f"predict.py: error: {message}", file=sys.stderr)
        return 2

    if args.top < 1:
        return fail(f"--top must be at least 1, got {args.top}")
    if args.batch_size < 1:
        return fail(f"--batch-size must be at least 1, got {args.batch_size}")
    from prediction import PredictionError, check_texts, read_texts_file

    try:
        # Texts are checked before TensorFlow is imported: mistakes show up at once.
        texts = list(args.texts)
        if args.file is not None:
            texts += read_texts_file(args.file)
        texts = check_texts(texts)
    except PredictionError as error:
        return fail(error)

    from evaluation import EvaluationError
    from prediction import (
        format_predictions,
        load_run,
        predict,
        predictions_to_json,
    )

    try:
        run = load_run(args.run_dir)
        predictions = predict(run, texts, explain=args.explain, top=args.top,
                              batch_size=args.batch_size)
    except EvaluationError as error:
        return fail(error)
    if args.json:
        print(json.dumps(predictions_to_json(run, predictions), indent=2))
    else:
        print(format_predictions(predictions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
