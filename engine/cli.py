"""What the commands (train.py, pretrain.py, evaluate.py, predict.py, compress.py,
export.py) share: a quiet TensorFlow start-up (`start_tensorflow`, whose owner is
`runtime/tensorflow_start.py`: importing this module sets TensorFlow's C++ log level), the
arguments and help of the inputs they share, the checks of a path the user typed that
run before TensorFlow loads, and the one-line error of a user mistake (a parser whose
errors are one line, `OneLineErrorParser`, and its whole-number type `at_least`).
"""

import argparse
import functools
import os
import sys

# The commands start TensorFlow through this module; `data` imports tensorflow_start itself.
from runtime.tensorflow_start import VERBOSE_ENV, start_tensorflow  # noqa: F401

TEXTS_FILE_HELP = (
    'texts file, one text per line, UTF-8 ("-" reads standard input); blank '
    "lines are skipped and the others keep their line numbers"
)


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


class UsageError(ValueError):
    """A command line that argparse rejects; the message is one line."""


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, its errors a `UsageError`, which the command reports as every other user
    mistake (`error_reporter`): one line, exit code 2 (argparse itself prints the usage
    and exits)."""

    def error(self, message):
        raise UsageError(message)


def at_least(minimum):
    """An argparse type: a whole number of at least `minimum`.

    Example:
    >>> at_least(1)("3")
    3
    >>> at_least(1)("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be at least 1, got 0
    """

    def whole_number(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return whole_number


def probability(text):
    """An argparse type: a number from 0 to 1.

    Example:
    >>> probability("0.7")
    0.7
    >>> probability("70")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be a probability from 0 to 1, got 70.0
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a probability from 0 to 1, got {value}")
    return value


def error_reporter(prog):
    """`fail(message)` for the command `prog`: prints `prog: error: message` on standard
    error, one line and no traceback, and returns 2, the exit code of a user mistake.

    Example:
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     code = error_reporter("export.py")("runs/x: no such run folder")
    >>> code, err.getvalue()
    (2, 'export.py: error: runs/x: no such run folder\\n')
    """
    return functools.partial(_report_error, prog)


def _report_error(prog, message):
    print(f"{prog}: error: {message}", file=sys.stderr)
    return 2
