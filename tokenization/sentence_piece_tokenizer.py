"""XLM-RoBERTa's SentencePiece Unigram tokenizer as a Keras layer (raw strings in).

The pieces come from tensorflow-text's `SentencepieceTokenizer`, which runs the
SentencePiece library itself on the model's bytes (its normaliser, its Viterbi): the
tokenization XLM-RoBERTa was trained with, in a TensorFlow op that works eagerly, in
`tf.function` and in an exported SavedModel (the bytes become a constant of the graph).
The bytes travel in the layer's config as base64, so a saved `.keras` model reloads in safe
mode with nothing beside it. Why not keras-hub's `SentencePieceTokenizer`: it wraps the same
op, but keeps the model as a Keras asset (loaded after the layer is built, so the layer
cannot be rebuilt from its config alone, as `with_sequence_length` does) and would make
keras-hub a dependency of every saved model; the special tokens, pairs and caps are
`CheckpointTokenizer`'s here, shared with the other families.

fairseq's ids: `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, then SentencePiece's piece k at
k + 1 (its own `<unk>`, `<s>`, `</s>` are 0 to 2), `<mask>` last. Ours swap 0 and 1
(`<pad>` is 0, as everywhere here), which no piece uses: piece k is our id k + 1, and
SentencePiece's unknown (0) our `<unk>`, 3.

One step is added before SentencePiece: `transformers`' tokenizer (tokenizer.json) splits
the normalised text at every Unicode White_Space character, SentencePiece only at spaces, so
a White_Space character its normaliser leaves as it is (U+0085 with XLM-R's NFKC table)
would be a piece (or `<unk>`) here and a split there; `_kept_spaces` finds those for the
layer's model, and they become spaces first.
"""

import base64

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from tokenization.checkpoint_tokenizer import CheckpointTokenizer

# Unicode's White_Space characters (Rust's `char::is_whitespace`, where `tokenizers` splits).
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
WHITE_SPACE += "\u2028\u2029\u202f\u205f\u3000"


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class SentencePieceTokenizer(CheckpointTokenizer):
    """Strings `(B,)` -> `<s> pieces </s>` ids of a SentencePiece model, fairseq's
    offset, padded with `<pad>` (id 0).

    With `pairs`, a text joined by `tokenization.pairs.join_pair` becomes
    `<s> first </s></s> second </s>`, the cap shared longest first, as XLM-RoBERTa's
    tokenizer in `transformers` does.

    Args:
        vocabulary: list of tokens in our ids: `<pad>`, `<s>`, `</s>`, `<unk>`, then the
            model's pieces from its fourth on, then `<mask>`.
        model: the SentencePiece model (a serialized ModelProto), bytes or base64 text.
        sequence_length: int or None. With an int, every row has exactly this many ids
            (the cap, the special tokens included); None: rows are padded to the longest.
        pairs: bool. Read each text as a pair (a text without the pair mark is one side).
        **kwargs: base layer arguments.
    """

    START, END, PAD, UNKNOWN = "<s>", "</s>", "<pad>", "<unk>"
    PAIR_SEPARATORS = 2

    def __init__(self, vocabulary, model, sequence_length=None, pairs=False, **kwargs):
        super().__init__(vocabulary, sequence_length, pairs, **kwargs)
        self.model = base64.b64decode(model) if isinstance(model, str) else bytes(model)
        self._sentencepiece = tf_text.SentencepieceTokenizer(model=self.model)
        pieces = int(self._sentencepiece.vocab_size())
        if pieces + 2 != len(self.vocabulary):  # fairseq adds <pad> and <mask>.
            raise ValueError(
                f"The vocabulary must have the model's {pieces} pieces and <pad> and "
                f"<mask>. Received: vocabulary of {len(self.vocabulary)} tokens"
            )
        self.unknown_id = self.vocabulary.index(self.UNKNOWN)
        kept = _kept_spaces(self._sentencepiece)
        self._kept_spaces = (
            "[" + "".join(f"\\x{{{ord(c):x}}}" for c in kept) + "]" if kept else None
        )

    def _pieces(self, texts):
        """The pieces' ids of each text (B, None), ragged, uncapped, in our ids."""
        if self._kept_spaces:
            texts = tf.strings.regex_replace(texts, self._kept_spaces, " ")
        ids = tf.cast(self._sentencepiece.tokenize(texts), tf.int64)  # SentencePiece's ids
        unknown = tf.constant(self.unknown_id, tf.int64)
        return tf.ragged.map_flat_values(lambda v: tf.where(v == 0, unknown, v + 1), ids)

    def get_config(self):
        config = super().get_config()
        config["model"] = base64.b64encode(self.model).decode("ascii")
        return config


def _kept_spaces(sentencepiece):
    """The White_Space characters that the model's normaliser neither turns into a space nor
    drops: alone in a text, they give pieces where a space gives none."""
    pieces = sentencepiece.tokenize(tf.constant(list(WHITE_SPACE)))
    return [c for c, n in zip(WHITE_SPACE, pieces.row_lengths().numpy()) if n]
