"""Built-in TFDS builders; importing this module registers them with `tfds.load`."""

from config import BUILTIN_DATASETS
from data.builders.bbc_news import BbcNews
from data.builders.reuters_r8 import ReutersR8
from data.builders.reuters_r52 import ReutersR52
from data.builders.rotten_tomatoes import RottenTomatoes
from data.builders.twenty_newsgroups import TwentyNewsgroups

_BY_NAME = {
    builder.name: builder
    for builder in (RottenTomatoes, ReutersR8, ReutersR52, TwentyNewsgroups, BbcNews)
}
# Name -> builder class for each of the config's built-in names, in its order (a name
# without a builder fails here, at import).
BUILTIN_BUILDERS = {name: _BY_NAME[name] for name in BUILTIN_DATASETS}

__all__ = [
    "BUILTIN_BUILDERS", "BbcNews", "ReutersR52", "ReutersR8", "RottenTomatoes", "TwentyNewsgroups",
]  # fmt: skip
