"""TextEncoder: token ids -> contextual token vectors, the part every model here shares.

The classifier (`TransformerClassifier`), the masked language model of pretrain.py and
`load_pretrained_encoder` hold one each, so a BERT checkpoint or a pretraining run loads into
the same layers whatever model they sit in.

Shapes: B batch, T token ids, A attended positions (T, or T + 1 with the class token),
L layers (`num_layers`), N heads, D model size.
"""

import keras

from layers import TokenAndPositionEmbedding, TransformerEncoderBlock
from layers.class_token import ClassToken
from layers.norm_scale import layer_norm


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class TextEncoder(keras.layers.Layer):
    """Token + position embedding -> dropout -> [class token] -> L
    `TransformerEncoderBlock`s -> [final LayerNorm when pre-norm].

    Masking: with `mask_zero`, token id 0 is padding; the padding mask (B, A), True = real
    token (and the class token), goes to every block and is this layer's output mask
    (`compute_mask`), so pooling after it skips padding.

    Args:
        vocabulary_size, sequence_length: of the token and position embeddings.
        d_model, num_heads, key_dim, intermediate_dim, dropout, attention_dropout,
            activation, norm_first, layer_norm_epsilon, attention_block_size: of each
            `TransformerEncoderBlock` (`key_dim`: the size of each head). `num_heads` may
            be a list, one count per block (a pruned model's).
        num_layers: int. Number of blocks L.
        positional_encoding, mask_zero, num_token_types, embedding_norm_epsilon,
            separator_id: of the `TokenAndPositionEmbedding` (BERT's token types and norm;
            the id after which a text pair's second segment begins).
        embedding_dim: int or None. The embeddings' width where it is not `d_model`
            (ELECTRA-small's 128 under 256-wide blocks): a Dense layer in the embedding
            projects them to `d_model`; None: `d_model`, no projection.
        class_token: bool. Put a learned `ClassToken` in front of the tokens.
        **kwargs: base layer arguments.

    Call arguments:
        token_ids: int (B, T), 0 = padding.
        training: bool. Dropout on.
        token_vectors: optional float (B, T, D) in place of the looked-up token vectors
            (positions and the padding mask still come from the ids).
        head_mask: optional float (L, N), or (B, L, N) for one mask per example:
            multiplies each head's output before its block's output projection; 0
            switches a head off.
        attention_weights_fn: optional function of each block's post-softmax weights
            (B, N, A, A) before they mix the values; it must keep their values.
        detach_norm_scale: bool. No gradient through the LayerNorms' 1 / std.
        return_attention_scores: bool. Also return every block's weights.
        hidden_states, start_block: optional float (B, A, D), what `lower_states(token_ids,
            start_block)` gave: the blocks from `start_block` on continue from them (a
            model whose lower blocks are frozen computes those once; `token_ids` still
            give the padding mask).

    Returns:
        (B, A, D), and with `return_attention_scores` a list of float32 (B, N, A, A), one
        per block run (L, or L - start_block).

    Example:

    >>> import numpy as np
    >>> encoder = TextEncoder(50, 8, d_model=16, num_heads=2, num_layers=2, key_dim=8,
    ...                       intermediate_dim=32)
    >>> states, scores = encoder(np.array([[4, 7, 0]]), return_attention_scores=True)
    >>> tuple(states.shape), [tuple(s.shape) for s in scores]
    ((1, 3, 16), [(1, 2, 3, 3), (1, 2, 3, 3)])
    """

    def __init__(
        self,
        vocabulary_size,
        sequence_length,
        d_model,
        num_heads,
        num_layers,
        intermediate_dim,
        key_dim=None,
        dropout=0.1,
        attention_dropout=0.0,
        activation="gelu",
        norm_first=False,
        layer_norm_epsilon=1e-5,
        attention_block_size=None,
        positional_encoding="sinusoidal",
        mask_zero=True,
        num_token_types=None,
        embedding_norm_epsilon=None,
        class_token=False,
        separator_id=None,
        embedding_dim=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.sequence_length = sequence_length
        self.d_model = d_model
        self.num_heads = num_heads
        self.num_layers = num_layers
        self.intermediate_dim = intermediate_dim
        self.key_dim = key_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.activation = activation
        self.norm_first = norm_first
        self.layer_norm_epsilon = layer_norm_epsilon
        self.attention_block_size = attention_block_size
        self.positional_encoding = positional_encoding
        self.mask_zero = mask_zero
        self.num_token_types = num_token_types
        self.embedding_norm_epsilon = embedding_norm_epsilon
        self.separator_id = separator_id
        self.embedding_dim = embedding_dim
        self.supports_masking = True
        # Each layer is built as soon as it is made, in the order the layers run: unseeded
        # initialisers draw their seeds when a layer is made or built, so one global seed
        # gives the same weights as the functional classifier of earlier versions did.
        token_ids, states = (None, None), (None, None, d_model)  # (B, T), (B, A, D)
        self.embedding = _built(self._make_embedding(), token_ids)
        self.embedding_dropout = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy, name="embedding_dropout"
        )
        self.class_token = (
            _built(ClassToken(dtype=self.dtype_policy, name="class_token"), states)
            if class_token
            else None
        )
        self.blocks = [_built(self._make_block(index), states) for index in range(num_layers)]
        # Pre-norm blocks leave their residual stream unnormalised: normalise once at the end.
        self.final_norm = (
            _built(
                keras.layers.LayerNormalization(
                    epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="final_norm"
                ),
                states,
            )
            if norm_first
            else None
        )

    def _make_embedding(self):
        return TokenAndPositionEmbedding(
            vocabulary_size=self.vocabulary_size,
            embedding_dim=self.embedding_dim or self.d_model,
            projection_dim=(
                self.d_model if self.embedding_dim not in (None, self.d_model) else None
            ),
            sequence_length=self.sequence_length,
            positional_encoding=self.positional_encoding,
            mask_zero=self.mask_zero,
            embeddings_initializer=_token_initializer(self.positional_encoding),
            num_token_types=self.num_token_types,
            layer_norm_epsilon=self.embedding_norm_epsilon,
            separator_id=self.separator_id,
            dtype=self.dtype_policy,
            name="token_and_position_embedding",
        )

    def _make_block(self, index):
        """Block `index`, with its own head count when `num_heads` is a list."""
        num_heads = self.num_heads
        return TransformerEncoderBlock(
            num_heads=num_heads[index] if isinstance(num_heads, (list, tuple)) else num_heads,
            intermediate_dim=self.intermediate_dim,
            key_dim=self.key_dim,
            dropout=self.dropout,
            attention_dropout=self.attention_dropout,
            activation=self.activation,
            norm_first=self.norm_first,
            layer_norm_epsilon=self.layer_norm_epsilon,
            attention_block_size=self.attention_block_size,
            dtype=self.dtype_policy,
            name=f"encoder_block_{index}",
        )

    @property
    def head_counts(self):
        """The number of heads of each block, a list (pruned blocks may keep fewer)."""
        return [block.num_heads for block in self.blocks]

    def build(self, token_ids_shape):
        pass  # Every sublayer was built when it was made.

    def lower_states(self, token_ids, num_blocks):
        """(B, A, D): the states after the embedding and the first `num_blocks` blocks, in
        inference mode; `call(token_ids, hidden_states=..., start_block=num_blocks)` goes
        on from them."""
        x = self.embedding(token_ids)  # (B, T, D)
        if self.class_token is not None:
            x = self.class_token(x)  # (B, A, D)
        padding_mask = self.compute_mask(token_ids)  # (B, A)
        for block in self.blocks[:num_blocks]:
            x = block(x, padding_mask=padding_mask, training=False)
        return x

    def call(
        self,
        token_ids,
        training=None,
        token_vectors=None,
        head_mask=None,
        attention_weights_fn=None,
        detach_norm_scale=False,
        return_attention_scores=False,
        hidden_states=None,
        start_block=0,
    ):
        if hidden_states is None:
            x = self.embedding(
                token_ids, token_vectors=token_vectors, detach_norm_scale=detach_norm_scale
            )  # (B, T, D)
            x = self.embedding_dropout(x, training=training)
            if self.class_token is not None:
                x = self.class_token(x)  # (B, A, D)
        else:
            x = hidden_states  # (B, A, D)
        padding_mask = self.compute_mask(token_ids)  # (B, A), None without mask_zero
        attention_scores = []
        for index, block in enumerate(self.blocks):
            if index < start_block:
                continue
            outputs = block(
                x,
                padding_mask=padding_mask,
                training=training,
                return_attention_scores=return_attention_scores,
                attention_weights_fn=attention_weights_fn,
                detach_norm_scale=detach_norm_scale,
                head_mask=None
                if head_mask is None
                else (head_mask[index] if len(head_mask.shape) == 2 else head_mask[:, index]),
            )
            x, scores = outputs if return_attention_scores else (outputs, None)  # (B, A, D)
            attention_scores.append(scores)  # (B, N, A, A)
        if self.final_norm is not None:
            x = layer_norm(self.final_norm, x, detach_norm_scale)
        if return_attention_scores:
            return x, attention_scores
        return x

    def compute_mask(self, token_ids, mask=None):
        padding_mask = self.embedding.compute_mask(token_ids)  # (B, T), None without mask_zero
        if self.class_token is not None:
            padding_mask = self.class_token.compute_mask(None, padding_mask)  # (B, A)
        return padding_mask

    def compute_output_spec(self, *args, **kwargs):
        # Traced: the optional scores and their float32 dtype come with the spec.
        return super(keras.layers.Layer, self).compute_output_spec(*args, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "sequence_length": self.sequence_length,
                "d_model": self.d_model,
                "num_heads": self.num_heads,
                "num_layers": self.num_layers,
                "intermediate_dim": self.intermediate_dim,
                "key_dim": self.key_dim,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "activation": self.activation,
                "norm_first": self.norm_first,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "attention_block_size": self.attention_block_size,
                "positional_encoding": self.positional_encoding,
                "mask_zero": self.mask_zero,
                "num_token_types": self.num_token_types,
                "embedding_norm_epsilon": self.embedding_norm_epsilon,
                "class_token": self.class_token is not None,
                "separator_id": self.separator_id,
                "embedding_dim": self.embedding_dim,
            }
        )
        return config


def _built(layer, input_shape):
    layer.build(input_shape)
    return layer


def _token_initializer(positional_encoding):
    if positional_encoding == "sinusoidal":
        # Start token vectors on the scale of the sinusoids (values in [-1, 1]); Keras'
        # default uniform(-0.05, 0.05) buries token identity under position for epochs.
        return keras.initializers.RandomNormal(stddev=1.0)
    # Learned positions start as small as the tokens: keep Keras' default.
    return "uniform"
