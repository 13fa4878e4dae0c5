"""Unlabelled texts given on the command line or in a file, one text per line.

predict.py and evaluate.py take such a file under one flag, `--texts-file` (its help text
is `cli.TEXTS_FILE_HELP`), which the errors name.
"""

import sys
from pathlib import Path

from runtime.errors import DataError
from tokenization.pairs import join_pair

TEXTS_FILE_FLAG = "--texts-file"


def check_texts(texts) -> list[str]:
    """The texts as a list of strings; no text, or an empty one, is a DataError.

    Example:
    >>> check_texts(["a good film"])
    ['a good film']
    """
    texts = [str(text) for text in texts]
    if not texts:
        raise DataError(f"no texts given: pass texts as arguments or {TEXTS_FILE_FLAG} FILE")
    for index, text in enumerate(texts):
        if not text.strip():
            raise DataError(f"text {index + 1} is empty: every text needs at least one word")
    return texts


def read_texts_file(path, pairs=False) -> list[tuple[int, str]]:
    """(line number, text) of each non-blank line (UTF-8). "-" reads standard input.
    With `pairs`, each line is a text pair, its two sides separated by a tab.

    Line numbers count from 1 and blank lines keep theirs, so a text's number is the line
    it is on.

    Raises:
        DataError: the file is missing, unreadable, not UTF-8 or has no text; with `pairs`,
            a line without a tab or with an empty side.
    """
    try:
        if str(path) == "-":
            content = sys.stdin.read()
        else:
            content = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(
            f"{TEXTS_FILE_FLAG} {path}: not a UTF-8 text file; save it as UTF-8"
        ) from None
    except OSError as error:
        raise DataError(
            f"{TEXTS_FILE_FLAG} {path}: cannot read the texts file ({error.strerror})"
        ) from None
    lines = [
        (number, line.strip())
        for number, line in enumerate(content.splitlines(), start=1)
        if line.strip()
    ]
    if not lines:
        raise DataError(f"{TEXTS_FILE_FLAG} {path}: no texts in the file; write one text per line")
    return [(number, pair_line(path, number, line)) for number, line in lines] if pairs else lines


def pair_line(path, number, line) -> str:
    """Line `number` of the texts file `path`, two tab-separated sides, joined as a pair
    (`tokenization.pairs`); a DataError naming the line when it is not a pair."""
    sides = [side.strip() for side in line.split("\t", 1)]
    if len(sides) < 2 or not all(sides):
        raise DataError(
            f"{TEXTS_FILE_FLAG} {path} line {number}: the run reads text pairs; write each "
            "line as FIRST<tab>SECOND"
        )
    try:
        return join_pair(*sides)
    except ValueError as error:
        raise DataError(f"{TEXTS_FILE_FLAG} {path} line {number}: {error}") from None
