"""Trains the transformer text classifier described by a config file.

Usage:
    python train.py --config configs/default.yaml
    python train.py --config configs/reuters_r8.yaml --set model.num_layers=4 training.epochs=3
    python train.py --config configs/tiny.yaml --overwrite

Steps: config -> data -> model -> fit -> save. The run folder (`runs/<config name>/` unless
`output.name` says otherwise) receives the resolved config, `model.keras` (raw strings in,
class probabilities out), `history.csv`, `labels.json`, TensorBoard logs and
`metrics.json` (validation and test). Training happens in `runs/<name>.partial/`; if it is
interrupted (Ctrl-C, kill), running the same command again resumes from the last finished
epoch. A finished run is only replaced with `--overwrite`.

Exit codes: 0 done, 1 training failed (e.g. NaN loss), 2 bad config or data, 130 interrupted.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="train.py",
        description="Train the transformer text classifier described by a YAML config.",
        epilog="Example: python train.py --config configs/default.yaml --set training.epochs=3",
    )
    parser.add_argument("--config", required=True, help="YAML config file (see configs/)")
    parser.add_argument(
        "--set",
        dest="overrides",
        nargs="+",
        action="extend",
        default=[],
        metavar="SECTION.FIELD=VALUE",
        help="override config fields, e.g. --set model.num_layers=4 training.epochs=3",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace a finished run of the same name (or discard an interrupted one)",
    )
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    # Config errors are reported before TensorFlow is even imported.
    from config import ConfigError, load_config

    try:
        config = load_config(args.config, args.overrides)
    except ConfigError as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2

    from data import DataError
    from training import TrainingError, format_summary, run_training

    try:
        result = run_training(config, overwrite=args.overwrite)
    except (ConfigError, DataError) as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    except TrainingError as error:
        print(f"train.py: training failed: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "\ntrain.py: interrupted; run the same command again to resume from the last "
            "finished epoch.",
            file=sys.stderr,
        )
        return 130
    print(format_summary(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
