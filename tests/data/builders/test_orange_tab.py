import pytest

from data import DataError
from data.builders.orange_tab import read_orange_tab

HEADER = b"Category\tText\nd\tstring\nclass\t\n"


def test_reads_rows_after_three_header_rows_and_skips_blank_rows():
    content = HEADER + b"\n\t\nearn\tprofit up\nacq\tbuys firm\n"
    assert read_orange_tab(content, "x.tab") == [("profit up", "earn"), ("buys firm", "acq")]


def test_columns_are_found_by_name():
    content = b"Text\tCategory\nstring\td\n\tclass\nprofit up\tearn\n"
    assert read_orange_tab(content, "x.tab") == [("profit up", "earn")]


def test_header_without_category_is_an_error():
    with pytest.raises(DataError, match=r"x.tab row 1: header \['Topic', 'Text'\]"):
        read_orange_tab(b"Topic\tText\nd\tstring\nclass\t\n", "x.tab")


def test_row_without_text_names_the_line():
    with pytest.raises(DataError, match="x.tab line 5"):
        read_orange_tab(HEADER + b"earn\tprofit\nearn\n", "x.tab")
