"""Built-in TFDS builders; importing this module registers them with `tfds.load`."""

from data.builders.bbc_news import BbcNews
from data.builders.reuters_r8 import ReutersR8
from data.builders.reuters_r52 import ReutersR52
from data.builders.rotten_tomatoes import RottenTomatoes
from data.builders.twenty_newsgroups import TwentyNewsgroups

# Name -> builder class, in the order the `datasets list` command shows them.
BUILTIN_BUILDERS = {
    builder.name: builder
    for builder in (RottenTomatoes, ReutersR8, ReutersR52, TwentyNewsgroups, BbcNews)
}

__all__ = [
    "BUILTIN_BUILDERS", "BbcNews", "ReutersR52", "ReutersR8", "RottenTomatoes", "TwentyNewsgroups",
]  # fmt: skip
