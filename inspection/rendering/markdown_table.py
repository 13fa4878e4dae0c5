"""Markdown tables: the one writer of the tables that reports save and benches print.

Written by hand on purpose: pandas' `DataFrame.to_markdown` needs `tabulate`, which is no
dependency of the project, and pads every cell to its column's width, which none of the
saved tables (tokens.md, slices.md, heads.md, ...) does; these functions write the tables
as they have always been written.
"""

RIGHT = "right"  # a column of numbers, `---:`; any other alignment is left, `---`


def markdown_cell(value):
    """`value` in a Markdown table cell: a "|" inside it (a word may be one) is escaped.

    Example:
    >>> markdown_cell("a|b")
    'a\\\\|b'
    """
    return str(value).replace("|", "\\|")


def markdown_row(cells):
    """One table row of `cells` as they are (escape text with `markdown_cell`).

    Example:
    >>> markdown_row([1, "good", 0.5])
    '| 1 | good | 0.5 |'
    """
    return "| " + " | ".join(map(str, cells)) + " |"


def markdown_rule(alignments):
    """The line under the header: one `---` per column, `---:` where it says `RIGHT`.

    Example:
    >>> markdown_rule(["left", RIGHT])
    '|---|---:|'
    """
    return "|" + "".join("---:|" if alignment == RIGHT else "---|" for alignment in alignments)


def markdown_table(header, rows, alignments=None):
    """The lines of a table: the header, its rule and a line per row of cells.

    Args:
        header: the column names. rows: iterables of cells, shown with `str`.
        alignments: per column, `RIGHT` or anything else for left; all left when None.

    Example:
    >>> print("\\n".join(markdown_table(["word", "count"], [["good", 3]], ["left", RIGHT])))
    | word | count |
    |---|---:|
    | good | 3 |
    """
    alignments = ["left"] * len(header) if alignments is None else alignments
    if len(alignments) != len(header):
        raise ValueError(
            f"one alignment per column ({len(header)}). Received: alignments={alignments}"
        )
    return [markdown_row(header), markdown_rule(alignments), *map(markdown_row, rows)]
