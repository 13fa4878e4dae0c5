"""Command line: `python -m keras_attention_lab COMMAND ...`.

Usage:
    python -m keras_attention_lab datasets                      # built-in datasets and sizes
    python -m keras_attention_lab datasets prepare reuters_r8 --data-dir ~/tensorflow_datasets

Each command lives in a module with `HELP`, `add_arguments(parser)` and `run(args)`; add a
line to COMMANDS to add one. Bad input raises DataError (a ValueError): printed as one line
on stderr, exit status 2.
"""

import argparse
import importlib
import sys

# Command name -> module implementing it.
COMMANDS = {
    "datasets": "data.cli",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m keras_attention_lab")
    subparsers = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, module_name in COMMANDS.items():
        modules[name] = importlib.import_module(module_name)
        modules[name].add_arguments(subparsers.add_parser(name, help=modules[name].HELP))
    args = parser.parse_args(argv)

    from data.errors import DataError

    try:
        return modules[args.command].run(args) or 0
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
