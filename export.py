"""Exports a finished run's model as a TensorFlow SavedModel, for serving.

Usage:
    python export.py runs/default                    # -> runs/default/saved_model/
    python export.py runs/default --token-ids-only --out served_ids

The SavedModel's `serving_default` signature takes raw strings (B,) and returns
{"probabilities": (B, C)}: the run's tokenizer is inside (a WordPiece run needs `import
tensorflow_text` where it loads). `serve_token_ids` takes the token ids (B, T) int64 that
the run's vectorizer gives (0 is padding) and returns the same. `--token-ids-only` writes
that signature alone, without any text op, for runtimes and converters that lack them
(ONNX, LiteRT). Works on any run folder, pruned ones included (docs/serving.md). The
folder is written whole or not at all, and never over an existing one.

Exit codes: 0 done, 2 a missing or unreadable run, or an output folder that exists.
"""

import argparse
import sys
from pathlib import Path

from engine import cli
from run_folder import runs, saved_run

# models and its serving export load TensorFlow, which takes seconds: the functions import them, so
# that `main` reports a bad argument at once, before that wait.


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="export.py", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="a finished run folder")
    parser.add_argument(
        "--out",
        help="the SavedModel folder (default: <run>/saved_model, or "
        "<run>/saved_model_token_ids with --token-ids-only)",
    )
    parser.add_argument(
        "--token-ids-only",
        action="store_true",
        help="only the token-id signature: no text ops in the graph",
    )
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    fail = cli.error_reporter("export.py")
    run_dir = Path(args.run_dir)
    problem = saved_run.run_dir_problem(run_dir)
    if problem:
        return fail(problem)
    default = "saved_model_token_ids" if args.token_ids_only else "saved_model"
    out = Path(args.out) if args.out else run_dir / default
    if out.exists():
        return fail(f"{out} already exists: pass --out DIR for a new folder, or remove it")
    cli.start_tensorflow()
    from models.serving import export_saved_model

    try:
        run = saved_run.load_run(run_dir)
        thresholds = run.thresholds  # a multi-label run's: the SavedModel gives sets too
    except runs.RunError as error:
        return fail(error)
    with runs.staged_folder(out) as staging:
        export_saved_model(
            run.model, staging, token_ids_only=args.token_ids_only, thresholds=thresholds
        )
    signatures = (
        "serve_token_ids" if args.token_ids_only else "serving_default (strings), serve_token_ids"
    )
    print(f"{out}: SavedModel with {signatures}; load it with tf.saved_model.load")
    return 0


if __name__ == "__main__":
    sys.exit(main())
