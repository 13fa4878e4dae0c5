"""Text -> token ids: the word-level vectoriser, its stop-word standardisation, WordPiece,
byte-level BPE, SentencePiece (the checkpoints' tokenizers, `CheckpointTokenizer`),
and text pairs as one string (`pairs`).

One home for tokenisation, imported by `data/` for the pipelines and by `models/` for the
saved end-to-end model; `import models` imports the layers and functions a saved model
names (registering them), so `model.keras` loads in safe mode.

Importing this package loads nothing else: each name below is imported from its module on
first use (PEP 562's module `__getattr__`), so `tokenization.pairs`, which commands use to
read their arguments, comes without TensorFlow's seconds of start-up.
"""

from runtime.lazy_names import lazy_names

# Each public name and the module that owns it.
_OWNERS = {
    "ByteLevelBpeTokenizer": "tokenization.byte_level_bpe_tokenizer",
    "CheckpointTokenizer": "tokenization.checkpoint_tokenizer",
    "SentencePieceTokenizer": "tokenization.sentence_piece_tokenizer",
    "WordPieceTokenizer": "tokenization.word_piece_tokenizer",
    "auto_sequence_length": "tokenization.vectorizer",
    "lower_strip_punctuation_drop_stop_words": "tokenization.stop_words",
    "make_vectorizer": "tokenization.vectorizer",
    "sequence_cap": "tokenization.vectorizer",
    "token_counter": "tokenization.vectorizer",
}

__all__ = sorted(_OWNERS)


__getattr__, __dir__ = lazy_names(__name__, _OWNERS)
