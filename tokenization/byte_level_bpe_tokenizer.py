"""RoBERTa's (GPT-2's) byte-level BPE as a Keras layer, in TensorFlow ops (raw strings in).

Why our own and not keras-hub's `BytePairTokenizer`: measured against the `tokenizers`
library on the same vocabulary and merges, keras-hub's graph path splits a run of
whitespace at the end of a text ("both  " -> "Ġ", "Ġ" where GPT-2's pattern keeps "ĠĠ"),
drops the character "६" (its internal marker) from the text, and in eager mode it runs
another, Python, path with Llama 3's split pattern (numbers in threes), so a model would
give other ids in `model(texts)` than in `model.predict`. Here the split follows GPT-2's
pattern exactly (its one look-ahead emulated by a split, below); the merges are the plain
BPE loop, leftmost lowest-ranked pair first, as `tokenizers` applies them. tests/tokenization
checks the ids against the `tokenizers` library.

Not covered: the literal text of a special token ("<mask>" typed in a text) is split like
any other text, where Hugging Face's tokenizer recognises it as that token.
"""

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from tokenization.checkpoint_tokenizer import CheckpointTokenizer

# Unicode's White_Space (what `\s` means to the Rust regex of `tokenizers`; RE2's `\s` is
# ASCII only): tab to CR, NEL, and the space separators.
SPACE = r"\t\n\x0B\f\r\x{85}\p{Z}"
# GPT-2's pre-tokenizer pattern without its `\s+(?!\S)` (RE2 has no look-ahead): that
# alternative leaves the last space of a run to the word after it, which `_words` does by
# splitting the text there first.
WORD = rf"'s|'t|'re|'ve|'m|'ll|'d| ?\p{{L}}+| ?\p{{N}}+| ?[^{SPACE}\p{{L}}\p{{N}}]+|[{SPACE}]+"
# A run of two or more spaces before a non-space: split before its last space. 0xFF is
# never a byte of UTF-8, so no text holds the split mark.
SPLIT_MARK = b"\xff"
LAST_SPACE = rf"([{SPACE}]+)([{SPACE}][^{SPACE}])"
# tensorflow-text's regex_split stops at a NUL byte: NUL travels through it as U+FFFF, a
# noncharacter of the same class in `WORD` (a text's own U+FFFF comes back as NUL).
NUL, NUL_STAND_IN = "\x00", "\uffff"
NO_MERGE = 2**31 - 1  # The rank of a pair that is no merge.


def byte_symbols():
    """GPT-2's printable stand-in for each byte (`bytes_to_unicode`): printable Latin-1
    bytes stand for themselves, the others for the characters from U+0100 on."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    others = [byte for byte in range(256) if byte not in printable]
    stand_ins = {byte: chr(byte) for byte in printable}
    stand_ins.update({byte: chr(256 + n) for n, byte in enumerate(others)})
    return [bytes([byte]) for byte in range(256)], [stand_ins[byte] for byte in range(256)]


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class ByteLevelBpeTokenizer(CheckpointTokenizer):
    """Strings `(B,)` -> byte-level BPE ids `<s> pieces </s>`, padded with `<pad>` (id 0).

    A text is split as GPT-2 splits it (contractions, letters, digits, other symbols, each
    with the space before it; runs of whitespace), each word's UTF-8 bytes become their
    stand-in characters, and the merges join them, lowest rank first. With `pairs`, a text
    joined by `tokenization.pairs.join_pair` becomes `<s> first </s></s> second </s>`, the
    cap shared as Hugging Face's tokenizers share it (longest first).

    Args:
        vocabulary: list of tokens; a token's index is its id, `<pad>` must be id 0.
        merges: list of "left right" strings, highest priority first (merges.txt).
        sequence_length: int or None. With an int, every row has exactly this many ids
            (the cap, the special tokens included); None: rows are padded to the longest.
        pairs: bool. Read each text as a pair (a text without the pair mark is one side).
        **kwargs: base layer arguments.

    Example:
    >>> vocabulary = ["<pad>", "<s>", "</s>", "<unk>", "a", "b", "Ġ", "ab", "Ġab"]
    >>> tokenizer = ByteLevelBpeTokenizer(vocabulary, ["a b", "Ġ ab"])
    >>> tokenizer(tf.constant(["ab ab", "ba"])).numpy().tolist()
    [[1, 7, 8, 2], [1, 5, 4, 2]]
    """

    START, END, PAD, UNKNOWN = "<s>", "</s>", "<pad>", "<unk>"
    PAIR_SEPARATORS = 2

    def __init__(self, vocabulary, merges, sequence_length=None, pairs=False, **kwargs):
        super().__init__(vocabulary, sequence_length, pairs, **kwargs)
        self.merges = [str(merge) for merge in merges]
        self._ids = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(self.vocabulary), tf.range(len(self.vocabulary), dtype=tf.int64)
            ),
            default_value=self.vocabulary.index(self.UNKNOWN),
        )
        self._ranks = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(self.merges, tf.string), tf.range(len(self.merges), dtype=tf.int32)
            ),
            default_value=NO_MERGE,
        )
        raw, stand_ins = byte_symbols()
        self._symbols = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(tf.constant(raw), tf.constant(stand_ins)),
            default_value="",
        )

    def _words(self, texts):
        """GPT-2's pre-tokenization: (B, None) ragged words of each text."""
        texts = tf.strings.regex_replace(texts, NUL, NUL_STAND_IN)
        marked = tf.strings.regex_replace(texts, LAST_SPACE, b"\\1" + SPLIT_MARK + b"\\2")
        pieces = tf.strings.split(marked, SPLIT_MARK)  # (B, None): runs cut before last space
        words = tf_text.regex_split(pieces.flat_values, WORD, WORD)  # (P, None)
        words = tf.strings.regex_replace(words, NUL_STAND_IN, NUL)
        return tf.RaggedTensor.from_row_splits(words, pieces.row_splits).merge_dims(1, 2)

    def _pieces(self, texts):
        """The BPE ids of each text (B, None), ragged, uncapped."""
        words = self._words(texts)
        unique, where = tf.unique(words.flat_values)  # Each distinct word merged once.
        symbols = self._symbols.lookup(tf.strings.bytes_split(unique))  # (U, None)
        merged = self._merge(symbols)
        ids = tf.gather(merged, where)  # (W, None)
        ids = tf.RaggedTensor.from_row_splits(ids, words.row_splits)
        return ids.merge_dims(1, 2)

    def _merge(self, symbols):
        """BPE on each row of ragged (U, None) symbols: while a row has a pair that is a
        merge, join its lowest-ranked, leftmost such pair. -> (U, None) int64 ids."""
        rows = tf.cast(symbols.nrows(), tf.int32)

        def merge_once(values, row_ids):
            starts = tf.concat([[0], tf.math.cumsum(tf.math.bincount(row_ids, minlength=rows))], 0)
            position = tf.range(tf.size(values)) - tf.gather(starts, row_ids)
            following = tf.concat([values[1:], [""]], 0)
            has_next = tf.concat([tf.equal(row_ids[1:], row_ids[:-1]), [False]], 0)
            ranks = tf.where(
                has_next,
                self._ranks.lookup(tf.strings.join([values, following], " ")),
                NO_MERGE,
            )
            best = tf.math.unsorted_segment_min(ranks, row_ids, rows)  # (U,)
            at_best = tf.logical_and(tf.equal(ranks, tf.gather(best, row_ids)), ranks < NO_MERGE)
            first = tf.math.unsorted_segment_min(
                tf.where(at_best, position, NO_MERGE), row_ids, rows
            )  # (U,) the leftmost best pair's position, NO_MERGE where none
            first = tf.gather(first, row_ids)
            joined = tf.where(tf.equal(position, first), values + following, values)
            kept = tf.not_equal(position, first + 1)
            return tf.boolean_mask(joined, kept), tf.boolean_mask(row_ids, kept)

        def mergeable(values, row_ids):
            following = tf.concat([values[1:], [""]], 0)
            has_next = tf.concat([tf.equal(row_ids[1:], row_ids[:-1]), [False]], 0)
            ranks = self._ranks.lookup(tf.strings.join([values, following], " "))
            return tf.reduce_any(tf.logical_and(has_next, ranks < NO_MERGE))

        values, row_ids = tf.while_loop(
            mergeable,
            merge_once,
            (symbols.flat_values, tf.cast(symbols.value_rowids(), tf.int32)),
            shape_invariants=(tf.TensorShape([None]), tf.TensorShape([None])),
        )
        return tf.RaggedTensor.from_value_rowids(
            self._ids.lookup(values), tf.cast(row_ids, tf.int64), nrows=symbols.nrows()
        )

    def get_config(self):
        config = super().get_config()
        config["merges"] = list(self.merges)
        return config
