"""Where the user's labelled files are (one file, a glob of shards or a folder of them),
and how errors about them name a row and a label.

`dataset.train_file` (and `validation_file`, `test_file`) may name one file, a glob
(`data/*.parquet`, `logs/**/*.csv`) or a folder; a glob or folder is a split in shards,
read in name order. Every shard of a split has the same format, told by its extension.
"""

import glob
import pathlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import DataError

SUPPORTED_SUFFIXES = (".csv", ".tsv", ".jsonl", ".parquet")
_GLOB_CHARACTERS = ("*", "?", "[")


def shard_paths(spec: str, key: str = "train_file") -> list[pathlib.Path]:
    """The files that `spec` names, in name order: itself, a glob's matches or a folder's
    data files (hidden files and other extensions, such as `_SUCCESS`, are skipped).

    Raises:
        DataError: nothing matches, an unsupported or missing file, or mixed formats; the
            message names `dataset.<key>`.

    Example:
    >>> import tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("part-1.csv", "part-0.csv", "_SUCCESS"):
    ...     _ = (folder / name).write_text("text,label\\n")
    >>> [path.name for path in shard_paths(str(folder))]
    ['part-0.csv', 'part-1.csv']
    """
    path = pathlib.Path(spec)
    if any(character in spec for character in _GLOB_CHARACTERS):
        paths = sorted(
            pathlib.Path(match)
            for match in glob.glob(spec, recursive=True)
            if pathlib.Path(match).is_file()
        )
        if not paths:
            raise DataError(
                f"dataset.{key}: no file matches {spec!r}; check the pattern "
                "(paths are relative to where you run the command)"
            )
    elif path.is_dir():
        paths = sorted(
            child
            for child in path.iterdir()
            if child.is_file()
            and child.suffix in SUPPORTED_SUFFIXES
            and not child.name.startswith(".")
        )
        if not paths:
            raise DataError(
                f"dataset.{key}: the folder {path} holds no "
                f"{', '.join(SUPPORTED_SUFFIXES)} file; point it at the data files"
            )
    else:
        paths = [path]
    for shard in paths:
        check_suffix(shard)
    suffixes = sorted({shard.suffix for shard in paths})
    if len(suffixes) > 1:
        raise DataError(
            f"dataset.{key}: {spec} mixes file types ({', '.join(suffixes)}); "
            "keep one format per split"
        )
    if len(paths) == 1 and not paths[0].is_file():
        raise DataError(
            f"{paths[0]} does not exist; check dataset.train_file, validation_file "
            "and test_file (paths are relative to where you run the command)"
        )
    return paths


def check_suffix(path: pathlib.Path) -> None:
    """Raises a DataError unless `path` has one of the supported extensions."""
    if path.suffix not in SUPPORTED_SUFFIXES:
        raise DataError(
            f"{path}: unsupported file type '{path.suffix}'; "
            f"use one of {', '.join(SUPPORTED_SUFFIXES)}"
        )


def total_bytes(paths: list[pathlib.Path]) -> int:
    """The size of the shards on disk (Parquet's is compressed)."""
    return sum(path.stat().st_size for path in paths)


def human_size(size_bytes: float) -> str:
    """`size_bytes` in the largest binary unit under it.

    Example:
    >>> human_size(1536), human_size(3 * 2**30)
    ('1.5 KiB', '3.0 GiB')
    """
    units, power = ("B", "KiB", "MiB", "GiB"), 0
    while size_bytes >= 1024 and power < len(units) - 1:
        size_bytes, power = size_bytes / 1024, power + 1
    return f"{size_bytes:.0f} B" if power == 0 else f"{size_bytes:,.1f} {units[power]}"


def row_name(path: pathlib.Path, row: int) -> str:
    """How an error names row `row` (from 0) of a file: rows count from 1 like a
    spreadsheet's data rows; CSV/TSV lines add the header line.

    Example:
    >>> row_name(pathlib.Path("train.csv"), 0)
    'train.csv row 1 (line 2)'
    """
    if path.suffix in (".csv", ".tsv"):
        return f"{path} row {row + 1} (line {row + 2})"
    if path.suffix == ".jsonl":
        return f"{path} row {row + 1} (line {row + 1})"
    return f"{path} row {row + 1}"


def sorted_class_names(labels) -> list[str]:
    """The labels sorted, as numbers when all are integers, so "10" comes after "9".

    Example:
    >>> sorted_class_names(["10", "9", "-1"])
    ['-1', '9', '10']
    """
    names = sorted(set(labels))
    if all(name.lstrip("-").isdigit() for name in names):
        names = sorted(names, key=int)
    return names


def label_ids(
    labels, class_names: list[str], where, column: str, given: bool = False
) -> np.ndarray:
    """The int64 ids of `labels` (a pyarrow string array) among `class_names`; a label that
    is not a class is a DataError naming its row by `where(index)`. `given`: the classes are
    `dataset.labels`, not those found in the training data."""
    ids = pc.index_in(labels, value_set=pa.array(class_names, pa.string()))
    if not ids.null_count:
        return ids.to_numpy().astype(np.int64)
    first = pc.index(pc.is_null(ids), True).as_py()
    shown = ", ".join(class_names[:10]) + (", ..." if len(class_names) > 10 else "")
    fix = (
        f"dataset.labels ({shown}); fix the label or add it to dataset.labels"
        if given
        else f"the training labels ({shown}); fix the label or add training examples of it"
    )
    raise DataError(
        f"{where(first)} column '{column}': label '{labels[first].as_py()}' is not in {fix}"
    )
