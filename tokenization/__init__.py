"""Text -> token ids: the word-level vectoriser, its stop-word standardisation, WordPiece.

One home for tokenisation, imported by `data/` for the pipelines and by `models/` for the
saved end-to-end model; importing it registers the layers and functions a saved model
names, so `model.keras` loads in safe mode.
"""

from tokenization.stop_words import lower_strip_punctuation_drop_stop_words
from tokenization.vectorizer import (
    auto_sequence_length,
    make_vectorizer,
    sequence_cap,
    token_counter,
)
from tokenization.word_piece_tokenizer import WordPieceTokenizer

__all__ = [
    "WordPieceTokenizer",
    "auto_sequence_length",
    "lower_strip_punctuation_drop_stop_words",
    "make_vectorizer",
    "sequence_cap",
    "token_counter",
]
