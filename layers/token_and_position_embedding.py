"""Token embedding plus a sinusoidal or learned positional encoding (and BERT's extras).

Shapes: B batch, T query (sequence) length, E embedding size (`embedding_dim`), D output
size (`projection_dim`, else E).
"""

import keras
from keras import ops

from layers.argument_checks import check_one_of, check_positive, check_positive_int
from layers.initializers import sublayer_initializer
from layers.norm_scale import layer_norm
from layers.position_embedding import PositionEmbedding
from layers.sinusoidal_positional_encoding import (
    SinusoidalPositionalEncoding,
)

POSITIONAL_ENCODINGS = ("sinusoidal", "learned")


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Embeds token ids and adds a positional encoding.

    With `num_token_types` it also adds a token-type (segment) embedding, and with
    `layer_norm_epsilon` it normalises the sum: BERT's embedding, which pretrained
    checkpoints load into (`starting_weights.checkpoints`). With `projection_dim` a Dense
    layer then widens the result (ELECTRA's embeddings, narrower than its blocks).

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
        num_token_types: int or None. Size of a token-type embedding table (BERT's
            segments); None: no token types.
        separator_id: int or None. With token types, the id that ends a text pair's first
            segment: when no `token_type_ids` are given, the tokens after the first
            separator are type 1 and the rest type 0 (`[CLS] a [SEP]` 0, `b [SEP]` 1, as
            BERT's tokenizer types a pair); None: every token is type 0.
        layer_norm_epsilon: float or None. LayerNormalization of the sum with this
            epsilon; None: no normalisation.
        projection_dim: int or None. A Dense projection (with bias) of the (normalised)
            sum to this size, the layer's output size; None: no projection, the output is
            `embedding_dim` wide.
        **kwargs: base layer arguments.

    Call arguments:
        token_ids: int tensor (B, T).
        token_type_ids: optional int tensor (B, T); all type 0 when not given.
        token_vectors: optional float tensor (B, T, E) used in place of the token
            embeddings of `token_ids` (positions, types and mask still come from the
            ids): gradient attributions differentiate with respect to it.
        detach_norm_scale: bool. No gradient through the embedding normalisation's
            1 / std (conservative propagation); same values.

    Returns:
        Float tensor (B, T, D) with a Keras mask when `mask_zero=True`: D is
        `projection_dim` when given, else `embedding_dim` (E).

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
        num_token_types=None,
        layer_norm_epsilon=None,
        separator_id=None,
        projection_dim=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("vocabulary_size", vocabulary_size)
        check_positive_int("embedding_dim", embedding_dim)
        check_one_of("positional_encoding", positional_encoding, POSITIONAL_ENCODINGS)
        check_positive_int("num_token_types", num_token_types, allow_none=True)
        check_positive("layer_norm_epsilon", layer_norm_epsilon, allow_none=True)
        check_positive_int("projection_dim", projection_dim, allow_none=True)
        if separator_id is not None and (num_token_types or 0) < 2:
            raise ValueError(
                "`separator_id` needs `num_token_types` of 2 or more (a pair's two segments). "
                f"Received: num_token_types={num_token_types}"
            )
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
        self.num_token_types = num_token_types
        self.layer_norm_epsilon = layer_norm_epsilon
        self.separator_id = separator_id
        self.projection_dim = projection_dim
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

        # Only when asked for: the weight paths of saved models without them stay as they are.
        if num_token_types:
            self.token_type_embedding = keras.layers.Embedding(
                num_token_types, embedding_dim, dtype=self.dtype_policy, name="token_type_embedding"
            )
        if layer_norm_epsilon:
            self.embedding_norm = keras.layers.LayerNormalization(
                epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="embedding_norm"
            )
        if projection_dim:
            self.embedding_projection = keras.layers.Dense(
                projection_dim, dtype=self.dtype_policy, name="embedding_projection"
            )

    def build(self, token_ids_shape, token_type_ids_shape=None):
        embeddings_shape = tuple(token_ids_shape) + (self.embedding_dim,)  # (B, T, E)
        self.token_embedding.build(token_ids_shape)
        self.position_encoding.build(embeddings_shape)
        if self.num_token_types:
            self.token_type_embedding.build(token_ids_shape)
        if self.layer_norm_epsilon:
            self.embedding_norm.build(embeddings_shape)
        if self.projection_dim:
            self.embedding_projection.build(embeddings_shape)

    def call(self, token_ids, token_type_ids=None, token_vectors=None, detach_norm_scale=False):
        if token_vectors is None:
            token_vectors = self.token_embedding(token_ids)  # (B, T, E)
        embeddings = ops.cast(token_vectors, self.compute_dtype)
        embeddings = embeddings + self.position_encoding(embeddings)
        if token_type_ids is None and self.separator_id is not None:
            token_type_ids = self.token_types(token_ids)
        if self.num_token_types:
            if token_type_ids is None:  # One segment: every token has type 0.
                # Through the layer, not its table: quantized, the table is int8.
                type_zero = self.token_type_embedding(ops.zeros((1, 1), "int32"))  # (1, 1, E)
                embeddings = embeddings + ops.cast(type_zero, self.compute_dtype)
            else:
                embeddings = embeddings + self.token_type_embedding(token_type_ids)
        if self.layer_norm_epsilon:
            embeddings = layer_norm(self.embedding_norm, embeddings, detach_norm_scale)
        if self.projection_dim:
            embeddings = self.embedding_projection(embeddings)  # (B, T, E) -> (B, T, D)
        return embeddings

    def token_types(self, token_ids):
        """(B, T) int32: 1 after the first `separator_id` of each row, else 0."""
        separators = ops.cast(ops.equal(token_ids, self.separator_id), "int32")
        return ops.minimum(ops.cumsum(separators, axis=-1) - separators, 1)

    def compute_mask(self, token_ids, token_type_ids=None, previous_mask=None, **kwargs):
        if not self.mask_zero:
            return None
        return ops.not_equal(token_ids, 0)

    def compute_output_shape(self, token_ids_shape, token_type_ids_shape=None, **kwargs):
        return tuple(token_ids_shape) + (self.projection_dim or self.embedding_dim,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "embedding_dim": self.embedding_dim,
                "sequence_length": self.sequence_length,
                "positional_encoding": self.positional_encoding,
                "mask_zero": self.mask_zero,
                "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
                "num_token_types": self.num_token_types,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "separator_id": self.separator_id,
                "projection_dim": self.projection_dim,
            }
        )
        return config
