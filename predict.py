"""Predicts the class of raw texts with a trained run, optionally explained word by word.

Usage:
    python predict.py runs/default "a wonderful, moving film" "dull and far too long"
    python predict.py runs/default --texts-file texts.txt    # one text per line ("-": stdin)
    python predict.py runs/default "a wonderful film" --explain --top 5
    python predict.py runs/default "a wonderful film" --explain --method leave_one_out
    python predict.py runs/default "a wonderful film" --explain --label negative
    python predict.py runs/default --texts-file texts.txt --json > predictions.json
    python predict.py runs/pairs --pair "Is it raining?" "Will it rain today?"
    python predict.py runs/pairs --texts-file pairs.tsv    # a run of text pairs: FIRST<tab>SECOND

Loads `RUN_DIR/model.keras` in safe mode and prints, per text, the predicted label and the
class probabilities. `--explain` adds the text's words ranked by an attribution method
for the predicted class, or toward `--label NAME` (`--method`, see
inspection/methods/attribution.py; default: the best one `evaluate.py --faithfulness`
measured for the run, else conservative gradient x input); with a
checkpoint's tokenizer (`model.pretrained`) a word's score is the sum of its pieces'
("play" + "##ed" = "played", "Ġplay" + "ed" too), and its special tokens are left out.
`--abstain-below P` answers "abstain" for a text whose top probability is under P
(`"abstained": true` in `--json`): a run's probabilities are calibrated on validation
(docs/evaluation.md), and `evaluate.py` writes the accuracy of the texts kept at each P.
`--json` prints one JSON document instead of tables. Texts given as arguments are
numbered [1], [2], ...; those of a texts file by their line, [line 3]. A text with no word
the model knows (all punctuation, or none in its vocabulary) gets a warning on stderr: its
prediction says nothing about it. A run trained on text pairs (`dataset.text_column:
[first, second]`) takes each pair as `--pair FIRST SECOND`, or a texts file with the two
sides of a pair on each line, separated by a tab; its texts are shown as `first ␞ second`.

Exit codes: 0 done, 2 missing or unreadable run folder or model, no text or an empty one,
an unreadable or empty texts file.
"""

import argparse
import json
import sys

import numpy as np

from config import ATTRIBUTION_METHODS
from data import DataError, check_texts, read_texts_file
from engine import cli
from run_folder import runs, saved_run

# models, inspection and engine.evaluation load TensorFlow, which takes seconds: the
# functions import them, so that `main` rejects bad arguments at once.


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="predict.py",
        description="Predict the class of raw texts with the saved model of a train.py run.",
        epilog='Example: python predict.py runs/default "a wonderful film" --explain',
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="train.py run folder")
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="texts to classify")
    parser.add_argument("--texts-file", metavar="FILE", help=cli.TEXTS_FILE_HELP)
    parser.add_argument(
        "--pair",
        nargs=2,
        action="append",
        default=[],
        metavar=("FIRST", "SECOND"),
        help="a text pair, for a run trained on pairs (repeat it for more)",
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="rank each text's words for the predicted class (a checkpoint's words, "
        "each the sum of its pieces; its special tokens are not ranked)",
    )
    parser.add_argument(
        "--method",
        choices=ATTRIBUTION_METHODS,
        metavar="NAME",
        help="with --explain, the attribution method: "
        + ", ".join(ATTRIBUTION_METHODS)
        + " (default: the run's best measured by evaluate.py --faithfulness, else "
        "conservative_gradient_x_input)",
    )
    parser.add_argument(
        "--label", metavar="NAME",
        help="with --explain, rank the words toward this class (default: the predicted "
        "one; a multi-label run's most probable label)",
    )  # fmt: skip
    parser.add_argument(
        "--top", type=int, default=10, metavar="K",
        help="with --explain, how many tokens (words) to list (default 10)",
    )  # fmt: skip
    parser.add_argument(
        "--abstain-below", type=cli.probability, metavar="P",
        help='answer "abstain" for a text whose top probability is under P (a run '
        "calibrates its probabilities: docs/evaluation.md has the accuracy each P keeps)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--batch-size", type=int, default=256, help="prediction batch size")
    return parser.parse_args(argv)


ABSTAIN = "abstain"


def predict(
    run, texts, explain=False, top=10, batch_size=256, method=None, abstain_below=None, label=None
):
    """Predicts every text on the fast path; `explain` adds its words ranked by `method`.

    Args:
        run: a `saved_run.Run`.
        texts: raw strings.
        explain: also rank each text's words by an attribution method (texts longer than
            the run's sequence length are cut).
        top: keep the `top` most important words; None keeps all.
        batch_size: texts per prediction batch.
        method: one of `inspection.methods.attribution.METHODS`; None: the run's best measured
            one (`engine.evaluation.faithfulness.explanation_method`).
        abstain_below: a text whose top probability is under it is answered ABSTAIN.
        label: with `explain`, the class the words are ranked toward (None: the predicted).

    Returns:
        A list of `inspection.Prediction`s, one per text.
    """
    from engine.evaluation.faithfulness import explanation_method
    from engine.label_sets import predicted_names
    from inspection import Prediction, known_token_counts, rank_tokens, token_scheme
    from models import predict_texts

    texts = check_texts(texts)
    probabilities = predict_texts(run.model, texts, batch_size)  # (N, C)
    if explain and method is None:
        method, _ = explanation_method(run.run_dir)
    if label is not None and label not in run.class_names:
        raise DataError(
            f"--label {label!r} is not a class of {run.run_dir}; its classes are "
            f"{', '.join(run.class_names)}"
        )
    rankings = rank_tokens(run, texts, top, method, label) if explain else [None] * len(texts)
    vectorizer, _ = run.parts
    vocabulary = vectorizer.get_vocabulary()
    known = known_token_counts(vectorizer(np.array(texts, dtype=object)), vocabulary)  # (N,)
    subword = token_scheme(vocabulary).subword
    sets = (
        predicted_names(probabilities, run.thresholds, run.class_names)
        if run.is_multi_label
        else [None] * len(texts)
    )
    abstained = [None] * len(texts)
    if abstain_below is not None:
        abstained = [bool(row.max() < abstain_below) for row in probabilities]
    return [
        Prediction(
            text=text,
            predicted_label=ABSTAIN if abstains else run.class_names[int(np.argmax(row))],
            probabilities={name: float(p) for name, p in zip(run.class_names, row, strict=True)},
            tokens=ranking,
            known_tokens=int(count),
            word_pieces=subword,
            method=method if explain else None,
            predicted_labels=labels,
            abstained=abstains,
            explained_label=label if explain else None,
        )
        for text, row, ranking, count, labels, abstains in zip(
            texts, probabilities, rankings, known, sets, abstained, strict=True
        )
    ]


def format_predictions(predictions, max_classes=10) -> str:
    """A small table per text: predicted label, class probabilities, ranked tokens."""
    lines = []
    for number, prediction in enumerate(predictions, start=1):
        text = prediction.text if len(prediction.text) <= 100 else prediction.text[:97] + "..."
        ranked = sorted(prediction.probabilities.items(), key=lambda item: -item[1])
        lines.append(f"[{prediction.number or number}] {text}")
        if prediction.predicted_labels is not None:  # A multi-label run: the set.
            shown = ", ".join(prediction.predicted_labels) or "no label"
            lines.append(f"    predicted labels: {shown}")
        elif prediction.abstained:
            lines.append(f"    predicted: {ABSTAIN} (top: {ranked[0][0]} {ranked[0][1]:.4f})")
        else:
            lines.append(f"    predicted: {prediction.predicted_label} ({ranked[0][1]:.4f})")
        width = max(len(name) for name, _ in ranked[:max_classes])
        lines.append(f"    {'class'.ljust(width)}  probability")
        lines += [f"    {name.ljust(width)}  {p:11.4f}" for name, p in ranked[:max_classes]]
        if len(ranked) > max_classes:
            lines.append(f"    ({len(ranked) - max_classes} more classes; --json lists all)")
        toward = f", toward {prediction.explained_label}" if prediction.explained_label else ""
        if prediction.tokens is not None and prediction.word_pieces:
            lines.append(f"    words by {prediction.method}{toward} (the sum of their pieces):")
            word_width = max([len(word.token) for word in prediction.tokens] + [4])
            lines.append(f"    {'word'.ljust(word_width)}  position  importance  pieces")
            lines += [
                f"    {word.token.ljust(word_width)}  {word.position:8d}  "
                f"{word.importance:10.4f}  {' '.join(word.pieces)}"
                for word in prediction.tokens
            ]
        elif prediction.tokens is not None:
            lines.append(f"    tokens by {prediction.method}{toward}:")
            token_width = max([len(word.token) for word in prediction.tokens] + [5])
            lines.append(f"    {'token'.ljust(token_width)}  position  importance")
            lines += [
                f"    {word.token.ljust(token_width)}  {word.position:8d}  {word.importance:10.4f}"
                for word in prediction.tokens
            ]
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def predictions_to_json(run, predictions) -> dict:
    """A JSON-serialisable document of the predictions (what `--json` prints)."""
    items = [prediction.as_json() for prediction in predictions]
    return {
        "run_dir": str(run.run_dir),
        "class_names": run.class_names,
        "pooling": run.pooling,
        "predictions": items,
    }


def given_texts(run, args):
    """(texts, their line numbers in --texts-file or None): the arguments' texts or pairs,
    then the file's, checked against what the run reads.

    Raises:
        DataError: none given, an empty one, or a single text for a run of pairs (or a
            pair for a run of single texts).
    """
    from tokenization.pairs import join_pair

    if run.is_pair and args.texts:
        raise DataError(
            f"{run.run_dir} reads text pairs: give each as --pair FIRST SECOND, or a "
            "--texts-file of FIRST<tab>SECOND lines"
        )
    if args.pair and not run.is_pair:
        raise DataError(
            f"{run.run_dir} reads single texts; --pair is for runs trained on two text "
            "columns (dataset.text_column: [first, second])"
        )
    try:
        texts = list(args.texts) + [join_pair(*check_texts(pair)) for pair in args.pair]
    except ValueError as error:
        raise DataError(f"--pair: {error}") from None
    lines = [None] * len(texts)
    if args.texts_file is not None:
        numbered = read_texts_file(args.texts_file, pairs=run.is_pair)
        texts += [text for _, text in numbered]
        lines += [line for line, _ in numbered]
    return check_texts(texts), lines


def main(argv=None):
    args = parse_args(argv)
    fail = cli.error_reporter("predict.py")
    if args.method and not args.explain:
        return fail("--method chooses how --explain ranks words: add --explain")
    if args.label and not args.explain:
        return fail("--label chooses the class --explain ranks words toward: add --explain")
    if args.top < 1:
        return fail(f"--top must be at least 1, got {args.top}")
    if args.batch_size < 1:
        return fail(f"--batch-size must be at least 1, got {args.batch_size}")
    problem = cli.missing_input("--texts-file", args.texts_file) or saved_run.run_dir_problem(
        args.run_dir
    )
    if problem:
        return fail(problem)
    cli.start_tensorflow()
    try:
        run = saved_run.load_run(args.run_dir)
        texts, lines = given_texts(run, args)
        if args.abstain_below is not None and run.is_multi_label:
            raise DataError(
                f"{run.run_dir}: --abstain-below takes runs with one label per text; a "
                "multi-label run gives each label whose probability reaches its threshold"
            )
        predictions = predict(
            run,
            texts,
            explain=args.explain,
            top=args.top,
            batch_size=args.batch_size,
            method=args.method,
            abstain_below=args.abstain_below,
            label=args.label,
        )
    except (runs.RunError, DataError) as error:
        return fail(error)
    for number, (prediction, line) in enumerate(zip(predictions, lines, strict=True), start=1):
        prediction.line = line
        if prediction.known_tokens == 0:
            print(
                f"predict.py: warning: [{prediction.number or number}] has no word the model "
                "knows (all punctuation, or none in its vocabulary): its prediction says "
                "nothing about the text",
                file=sys.stderr,
            )
    if args.json:
        print(json.dumps(predictions_to_json(run, predictions), indent=2))
    else:
        print(format_predictions(predictions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
