"""BERT's WordPiece tokenisation as a Keras layer, in TensorFlow ops (raw strings in).

Why tensorflow-text's `FastWordpieceTokenizer` under our own normalisation, and not its
`FastBertTokenizer` or keras-hub's `WordPieceTokenizer`: both of those fold case with
NFKC case folding ("ﬁ" -> "fi", "ß" -> "ss", full-width letters -> ASCII) and turn control
characters into spaces, where the checkpoints' own tokenizer (Hugging Face's
`BertNormalizer`) lower-cases, keeps ligatures and full-width letters (they become
`[UNK]`) and deletes control characters; ids then differ on such text. The normalisation
below follows `BertNormalizer` step by step, and `tests/tokenization` checks the ids against
the `tokenizers` library. FastWordpiece then splits on whitespace and punctuation as BERT
does and looks the pieces up (linear time, C++).
"""

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from tokenization.checkpoint_tokenizer import CheckpointTokenizer

# BERT's CJK blocks (`BasicTokenizer._is_chinese_char`): each character becomes a word.
CJK_CHARACTERS = (
    r"\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}\x{2A700}-\x{2B73F}"
    r"\x{2B740}-\x{2B81F}\x{2B820}-\x{2CEAF}\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}"
)
# NUL, the replacement character and every other (C) character but tab, newline and CR.
CONTROL_CHARACTERS = r"[\x{0}\x{FFFD}]|[^\t\n\r\PC]"
WHITESPACE = r"[\s\p{Z}]"
# A word is a run of characters that are neither whitespace nor punctuation (BERT counts
# ASCII symbols as punctuation too).
WORD_CHARACTER = r"[^\s\p{Z}\p{P}!-/:-@\[-`{-~]"


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class WordPieceTokenizer(CheckpointTokenizer):
    """Strings `(B,)` -> WordPiece ids `[CLS] pieces [SEP]`, padded with `[PAD]`.

    Normalisation as the checkpoint's tokenizer is configured (Hugging Face
    `BertNormalizer`): control characters deleted, whitespace made spaces, CJK characters
    made words of their own, accents stripped (NFD, then combining marks removed), then
    lower-cased. Words split on whitespace and punctuation; a word longer than
    `max_word_length` characters, or one the vocabulary cannot spell, becomes `[UNK]`.
    Over-long texts are cut so that `[SEP]` stays last. With `pairs`, a text joined by
    `tokenization.pairs.join_pair` becomes `[CLS] first [SEP] second [SEP]`, the cap
    shared between the sides as Hugging Face's tokenizers share it (longest first).

    It stands in for `keras.layers.TextVectorization` in the pipelines and the saved
    model: the same `get_vocabulary()`, `vocabulary_size()` and
    `output_sequence_length` config key. TensorFlow only (tensorflow-text ops).

    Args:
        vocabulary: list of tokens; a token's index is its id, `[PAD]` must be id 0.
        sequence_length: int or None. With an int, every row has exactly this many ids
            (the cap, `[CLS]` and `[SEP]` included); None: rows are padded to the longest.
        lowercase: bool. Lower-case the text (uncased checkpoints).
        strip_accents: bool or None. None: strip them when `lowercase`, as BERT does.
        split_cjk: bool. Make each CJK character a word.
        max_word_length: int. Longer words become `[UNK]`.
        pairs: bool. Read each text as a pair (a text without the pair mark is one side).
        **kwargs: base layer arguments.

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "film", "!", "##s"]
    >>> tokenizer = WordPieceTokenizer(vocabulary, sequence_length=6)
    >>> tokenizer(tf.constant(["Good films!", "café"])).numpy().tolist()
    [[2, 4, 5, 7, 6, 3], [2, 1, 3, 0, 0, 0]]
    >>> pairs = WordPieceTokenizer(vocabulary, sequence_length=6, pairs=True)
    >>> pairs(tf.constant(["good films ␞ good", "good"])).numpy().tolist()
    [[2, 4, 5, 3, 4, 3], [2, 4, 3, 0, 0, 0]]
    """

    START, END, PAD, UNKNOWN = "[CLS]", "[SEP]", "[PAD]", "[UNK]"

    def __init__(
        self,
        vocabulary,
        sequence_length=None,
        lowercase=True,
        strip_accents=None,
        split_cjk=True,
        max_word_length=100,
        pairs=False,
        **kwargs,
    ):
        super().__init__(vocabulary, sequence_length, pairs, **kwargs)
        self.lowercase = bool(lowercase)
        self.strip_accents = strip_accents
        self.split_cjk = bool(split_cjk)
        self.max_word_length = int(max_word_length)
        # Four bytes a character at most: a word within max_word_length characters always
        # fits; longer ones are replaced by a word of more bytes than that (see `call`).
        self._max_bytes = 4 * self.max_word_length
        self._wordpiece = tf_text.FastWordpieceTokenizer(
            self.vocabulary,
            token_out_type=tf.int64,
            unknown_token="[UNK]",
            no_pretokenization=False,
            support_detokenization=False,
            max_bytes_per_word=self._max_bytes,
        )

    def normalize(self, texts):
        """BERT's normalisation of a string tensor (before the split into words)."""
        texts = tf.strings.regex_replace(texts, CONTROL_CHARACTERS, "")
        texts = tf.strings.regex_replace(texts, WHITESPACE, " ")
        if self.split_cjk:
            texts = tf.strings.regex_replace(texts, f"([{CJK_CHARACTERS}])", r" \1 ")
        if self.lowercase if self.strip_accents is None else self.strip_accents:
            texts = tf.strings.regex_replace(tf_text.normalize_utf8(texts, "NFD"), r"\p{Mn}", "")
        if self.lowercase:
            texts = tf.strings.lower(texts, encoding="utf-8")
        # Over-long words become a word FastWordpiece must call [UNK] (more bytes than it
        # takes). The exact pattern is slow in RE2 (a counted Unicode class), so it runs only
        # on the texts that a cheap pattern finds a long run of non-spaces in.
        suspects = tf.where(
            tf.strings.regex_full_match(texts, f"(?s).*[^ ]{{{self.max_word_length + 1}}}.*")
        )  # (K, 1)
        fixed = tf.strings.regex_replace(
            tf.gather_nd(texts, suspects),
            f"{WORD_CHARACTER}{{{self.max_word_length + 1},}}",
            "x" * (self._max_bytes + 1),
        )
        return tf.tensor_scatter_nd_update(texts, suspects, fixed)

    def _pieces(self, texts):
        """The WordPiece ids of each text (B, None), ragged, uncapped."""
        return self._wordpiece.tokenize(self.normalize(texts))

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "lowercase": self.lowercase,
                "strip_accents": self.strip_accents,
                "split_cjk": self.split_cjk,
                "max_word_length": self.max_word_length,
            }
        )
        return config
