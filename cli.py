"""What the commands (train.py, pretrain.py, evaluate.py, predict.py) share: a quiet
TensorFlow start-up, the arguments and help of the inputs they share, and the checks of a
path the user typed that run before TensorFlow loads.

TensorFlow's C++ side prints its start-up lines (the absl "before InitializeLog" warning,
the oneDNN notice, "Could not find cuda drivers", CPU feature notes) straight to the
process's stderr while it is imported and while it first looks for devices, before
`TF_CPP_MIN_LOG_LEVEL` applies. A command's output should be its own, so those two steps
run with file descriptor 2 pointed at /dev/null. Numerics do not change (oneDNN stays on).
`KERAS_ATTENTION_LAB_VERBOSE=1` shows them again.
"""

import argparse
import contextlib
import os
import sys

VERBOSE_ENV = "KERAS_ATTENTION_LAB_VERBOSE"

# TensorFlow's C++ log lines at run time too (level 3 keeps only fatal ones; e.g. oneDNN's
# "supports DT_BOOL only on platforms with AVX-512" note during an attention export).
# Failures still raise Python errors; KERAS_ATTENTION_LAB_VERBOSE=1 leaves the level alone.
if os.environ.get(VERBOSE_ENV, "").lower() in ("", "0", "false", "no"):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


TEXTS_FILE_HELP = ('texts file, one text per line, UTF-8 ("-" reads standard input); blank '
                   "lines are skipped and the others keep their line numbers")


def config_command_parser(prog, description, epilog) -> argparse.ArgumentParser:
    """The arguments of the commands that run a config (train.py, pretrain.py)."""
    parser = argparse.ArgumentParser(prog=prog, description=description, epilog=epilog)
    parser.add_argument("--config", required=True, help="YAML config file (see configs/)")
    parser.add_argument(
        "--set", dest="overrides", nargs="+", action="extend", default=[],
        metavar="SECTION.FIELD=VALUE",
        help="override config fields, e.g. --set model.num_layers=4 training.epochs=3",
    )  # fmt: skip
    parser.add_argument(
        "--overwrite", action="store_true",
        help="replace a finished run of the same name (or discard an interrupted one)",
    )  # fmt: skip
    parser.add_argument(
        "--print-config", action="store_true",
        help="print the resolved config, each field with its comment (docs/config.md), "
             "and exit without training",
    )  # fmt: skip
    return parser


def missing_input(flag, path) -> str | None:
    """The error for an input file `flag PATH` that does not exist, or None.

    Example:
    >>> missing_input("--data", "nothere.csv")
    '--data nothere.csv: no such file'
    >>> missing_input("--texts-file", "-") is None  # standard input
    True
    """
    if path is None or str(path) == "-" or os.path.isfile(path):
        return None
    kind = "a folder, not a file" if os.path.isdir(path) else "no such file"
    return f"{flag} {path}: {kind}"


def verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "").lower() not in ("", "0", "false", "no")


@contextlib.contextmanager
def stderr_silenced():
    """Sends what is written to file descriptor 2 (C++ included) to /dev/null meanwhile."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def start_tensorflow(find_devices: bool = True) -> None:
    """Imports TensorFlow and Keras and finds the devices, quietly unless verbose().

    `find_devices=False` leaves the devices alone: a MultiWorkerMirroredStrategy must be
    created before TensorFlow's runtime starts (the CUDA probe may then log later)."""
    with contextlib.nullcontext() if verbose() else stderr_silenced():
        import keras  # noqa: F401
        import tensorflow as tf

        if find_devices:
            tf.config.list_logical_devices()  # the CUDA probe logs here, not at import
