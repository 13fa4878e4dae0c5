"""Unlabelled texts given on the command line or in a file, one text per line."""

import sys
from pathlib import Path

from data.errors import DataError


def check_texts(texts) -> list[str]:
    """The texts as a list of strings; no text, or an empty one, is a DataError.

    Example:
    >>> check_texts(["a good film"])
    ['a good film']
    """
    texts = [str(text) for text in texts]
    if not texts:
        raise DataError("no texts given: pass texts as arguments or --file FILE")
    for index, text in enumerate(texts):
        if not text.strip():
            raise DataError(f"text {index + 1} is empty: every text needs at least one word")
    return texts


def read_texts_file(path) -> list[str]:
    """One text per line (UTF-8); blank lines are skipped. "-" reads standard input.

    Raises:
        DataError: the file is missing, unreadable, not UTF-8 or has no text.
    """
    try:
        if str(path) == "-":
            content = sys.stdin.read()
        else:
            content = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{path}: not a UTF-8 text file; save it as UTF-8") from None
    except OSError as error:
        raise DataError(f"{path}: cannot read the texts file ({error.strerror})") from None
    texts = [line.strip() for line in content.splitlines() if line.strip()]
    if not texts:
        raise DataError(f"{path}: no texts in the file; write one text per line")
    return texts
