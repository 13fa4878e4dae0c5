"""Token embedding plus a sinusoidal or learned positional encoding.

Shapes: B batch, T query (sequence) length, D model size (`embedding_dim`).
"""

import keras
from keras import ops

from layers.argument_checks import check_one_of, check_positive_int
from layers.initializers import sublayer_initializer
from layers.position_embedding import PositionEmbedding
from layers.sinusoidal_positional_encoding import (
    SinusoidalPositionalEncoding,
)

POSITIONAL_ENCODINGS = ("sinusoidal", "learned")


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Embeds token ids and adds a positional encoding.

    Masking: with `mask_zero=True` (the default) id 0 is padding and the layer
    emits the Keras mask `token_ids != 0` (True = real token), which downstream
    layers (`MultiHeadAttention`, `TransformerEncoderBlock`, pooling) use.

    Args:
        vocabulary_size: int > 0. Number of token ids, padding included.
        embedding_dim: int > 0. Size D of the embeddings.
        sequence_length: int or None. Longest sequence; required for
            `positional_encoding="learned"`.
        positional_encoding: "sinusoidal" (no length limit) or "learned".
        mask_zero: bool. Treat id 0 as padding.
        embeddings_initializer: initializer of the token table; the table gets
            its own copy (`layers.initializers.sublayer_initializer`).
        **kwargs: base layer arguments.

    Call arguments:
        token_ids: int tensor (B, T).

    Returns:
        Float tensor (B, T, D) with a Keras mask when `mask_zero=True`.

    Example:

    >>> import numpy as np
    >>> layer = TokenAndPositionEmbedding(vocabulary_size=10, embedding_dim=4)
    >>> ops.convert_to_numpy(layer.compute_mask(np.array([[3, 0]]))).tolist()
    [[True, False]]
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        sequence_length=None,
        positional_encoding="sinusoidal",
        mask_zero=True,
        embeddings_initializer="uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("vocabulary_size", vocabulary_size)
        check_positive_int("embedding_dim", embedding_dim)
        check_one_of("positional_encoding", positional_encoding, POSITIONAL_ENCODINGS)
        if positional_encoding == "learned" and sequence_length is None:
            raise ValueError(
                "`sequence_length` is required with positional_encoding='learned'. "
                "Received: sequence_length=None"
            )
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.sequence_length = sequence_length
        self.positional_encoding = positional_encoding
        self.mask_zero = mask_zero
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.supports_masking = mask_zero
        self.token_embedding = keras.layers.Embedding(
            vocabulary_size,
            embedding_dim,
            embeddings_initializer=sublayer_initializer(
                self.embeddings_initializer, "token_embedding"
            ),
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        if positional_encoding == "learned":
            self.position_encoding = PositionEmbedding(
                sequence_length, dtype=self.dtype_policy, name="position_embedding"
            )
        else:
            self.position_encoding = SinusoidalPositionalEncoding(
                dtype=self.dtype_policy, name="position_encoding"
            )

    def build(self, input_shape):
        self.token_embedding.build(input_shape)
        self.position_encoding.build(tuple(input_shape) + (self.embedding_dim,))

    def call(self, token_ids):
        embeddings = self.token_embedding(token_ids)  # (B, T, D)
        return embeddings + self.position_encoding(embeddings)

    def compute_mask(self, token_ids, previous_mask=None):
        if not self.mask_zero:
            return None
        return ops.not_equal(token_ids, 0)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.embedding_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "embedding_dim": self.embedding_dim,
                "sequence_length": self.sequence_length,
                "positional_encoding": self.positional_encoding,
                "mask_zero": self.mask_zero,
                "embeddings_initializer": keras.initializers.serialize(
                    self.embeddings_initializer
                ),
            }
        )
        return config
