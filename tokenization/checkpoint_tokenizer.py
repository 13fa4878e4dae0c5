"""What every checkpoint tokenizer layer shares: special tokens around the pieces, a text
pair's sides and their shared cap, padding, and the `TextVectorization`-like interface.

A subclass (`WordPieceTokenizer`, `ByteLevelBpeTokenizer`) turns texts into their pieces'
ids (`_pieces`) and names its special tokens; this class assembles
`start first end [end] second end` (one separator between a pair's sides for BERT, two
for RoBERTa) and pads with id 0, the padding every model here masks.
"""

import keras
import tensorflow as tf

from tokenization.pairs import PAIR_MARK, shared_lengths


class CheckpointTokenizer(keras.layers.Layer):
    """Strings `(B,)` -> `start pieces end` ids `(B, T)`, padded with id 0 (base class).

    Subclasses set the class attributes and implement `_pieces(texts)` (a ragged int64
    `(B, None)` of each text's piece ids, uncapped); their `__init__` takes `vocabulary`,
    `sequence_length` and `pairs` through to this one.

    Attributes:
        START, END, PAD, UNKNOWN: the vocabulary's special tokens; PAD must be id 0.
        PAIR_SEPARATORS: how many END tokens stand between a pair's sides.
    """

    START = END = PAD = UNKNOWN = None
    PAIR_SEPARATORS = 1

    def __init__(self, vocabulary, sequence_length=None, pairs=False, **kwargs):
        kwargs.setdefault("dtype", "int64")
        super().__init__(**kwargs)
        self.trainable = False
        vocabulary = [str(token) for token in vocabulary]
        for token in (self.PAD, self.UNKNOWN, self.START, self.END):
            if token not in vocabulary:
                raise ValueError(
                    f"The vocabulary has no {token} token. Received: "
                    f"vocabulary of {len(vocabulary)} tokens"
                )
        if vocabulary[0] != self.PAD:
            raise ValueError(
                f"`{self.PAD}` must be id 0 (the padding the models mask). Received: "
                f"vocabulary[0]={vocabulary[0]!r}"
            )
        if sequence_length is not None and sequence_length < self._specials(bool(pairs)):
            raise ValueError(
                f"`sequence_length` must leave room for {self.START} and {self.END} (and "
                f"the separators between a pair's sides with pairs). Received: "
                f"sequence_length={sequence_length}, pairs={pairs}"
            )
        self.vocabulary = vocabulary
        self.sequence_length = sequence_length
        self.pairs = bool(pairs)
        self.cls_id = vocabulary.index(self.START)
        self.sep_id = vocabulary.index(self.END)

    def _specials(self, paired):
        """How many special tokens a text (or a pair, `paired`) gets."""
        return 2 + self.PAIR_SEPARATORS * paired

    def _pieces(self, texts):
        raise NotImplementedError

    def call(self, texts):
        texts = tf.convert_to_tensor(texts, dtype=tf.string)
        if self.pairs:
            paired = tf.strings.regex_full_match(texts, f"(?s).*{PAIR_MARK}.*")
            first, second = (self._pieces(side) for side in _sides(texts, paired))
        else:
            first, second = self._pieces(texts), None
            paired = tf.zeros_like(texts, dtype=tf.bool)
        if self.sequence_length is not None:
            budget = self.sequence_length - self._specials(tf.cast(paired, tf.int64))  # (B,)
            if second is None:
                first = first[:, : self.sequence_length - 2]
            else:
                kept = shared_lengths(
                    first.row_lengths(), second.row_lengths(), budget, tf.experimental.numpy
                )
                first, second = (_first(pieces, k) for pieces, k in zip((first, second), kept))
        parts = [self._column(texts, self.cls_id), first, self._column(texts, self.sep_id)]
        if second is not None:  # The pairs' rows: more separators, the second side, an end.
            parts += [self._on_pairs(paired, self.PAIR_SEPARATORS - 1), second]
            parts.append(self._on_pairs(paired, 1))
        token_ids = tf.concat(parts, axis=1)  # (B, None)
        shape = None if self.sequence_length is None else [None, self.sequence_length]
        return token_ids.to_tensor(default_value=0, shape=shape)  # (B, T)

    def _on_pairs(self, paired, count):
        """(B, None) ragged: `count` END ids on the rows that are pairs, none elsewhere."""
        lengths = tf.cast(paired, tf.int64) * count
        ends = tf.fill([tf.reduce_sum(lengths)], tf.constant(self.sep_id, tf.int64))
        return tf.RaggedTensor.from_row_lengths(ends, lengths)

    @staticmethod
    def _column(texts, token_id):
        """(B, 1) ragged, `token_id` on every row."""
        batch = tf.shape(texts)[0:1]
        return tf.RaggedTensor.from_tensor(
            tf.fill(tf.concat([batch, [1]], 0), tf.constant(token_id, tf.int64))
        )

    def compute_output_spec(self, texts):
        return keras.KerasTensor((texts.shape[0], self.sequence_length), dtype="int64")

    def get_vocabulary(self):
        return list(self.vocabulary)

    def vocabulary_size(self):
        return len(self.vocabulary)

    def with_sequence_length(self, sequence_length):
        """The same tokenizer with another cap."""
        return type(self).from_config(
            {**self.get_config(), "output_sequence_length": sequence_length}
        )

    def for_pairs(self):
        """The same tokenizer reading texts as pairs."""
        return type(self).from_config({**self.get_config(), "pairs": True})

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary": self.get_vocabulary(),
                # The key TextVectorization uses, so callers read the cap the same way.
                "output_sequence_length": self.sequence_length,
                "pairs": self.pairs,
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["sequence_length"] = config.pop("output_sequence_length", None)
        return cls(**config)


def _sides(texts, paired):
    """(first, second) sides of joined pairs, as `pairs.split_pair` makes them: the join's
    space on either side of the mark removed (byte-level BPE would read it), the second
    side empty where a text is no pair."""
    sides = tf.strings.split(texts, PAIR_MARK, maxsplit=1).to_tensor("", shape=[None, 2])
    first = tf.where(paired, tf.strings.regex_replace(sides[:, 0], " $", ""), sides[:, 0])
    return first, tf.strings.regex_replace(sides[:, 1], "^ ", "")


def _first(pieces, counts):
    """The first `counts[i]` pieces of each row i of a ragged (B, None) tensor."""
    return tf.ragged.boolean_mask(pieces, tf.ragged.range(pieces.row_lengths()) < counts[:, None])
