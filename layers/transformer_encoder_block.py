"""Transformer encoder block: self-attention and feed-forward with residuals.

Shapes: B batch, T query (sequence) length, N heads, H head size, D model size.
In self-attention the keys are the queries: the key length S is T.
"""

import keras
from keras import ops

from layers.argument_checks import check_positive, check_positive_int, check_rate
from layers.feed_forward import FeedForward
from layers.initializers import sublayer_initializer
from layers.local_blocks import block_diagonal_scores, merge_blocks, split_into_blocks
from layers.multi_head_attention import MultiHeadAttention
from layers.norm_scale import layer_norm


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class TransformerEncoderBlock(keras.layers.Layer):
    """One Transformer encoder block (Vaswani et al., 2017).

    Multi-head self-attention, then a position-wise feed-forward network, each
    wrapped in dropout, a residual connection and layer normalisation. Post-norm
    (`norm_first=False`, the original paper): `x = LN(x + Dropout(f(x)))`.
    Pre-norm (`norm_first=True`, more stable for deep stacks):
    `x = x + Dropout(f(LN(x)))`.

    Masking: `padding_mask` (B, T), True = real token, is taken from the Keras
    mask of `inputs` when not given (e.g. after
    `TokenAndPositionEmbedding(mask_zero=True)`); when both are present they are
    combined with AND, and with `attention_mask` ((B, T, T), (T, T), (B, N, T, T)
    or (B, 1, T, T)) and the causal mask of `use_causal_mask=True`. Padded keys
    get zero attention weight. The output keeps the input's padding mask. With
    `attention_block_size=C`, each token attends only to the tokens of its own
    block of C consecutive positions, as if a block-diagonal `attention_mask`
    were ANDed in (then `attention_mask` itself is not accepted).

    Args:
        num_heads: int > 0. Number of attention heads.
        intermediate_dim: int > 0. Hidden width of the feed-forward network.
        key_dim: int or None. Size H of each head; defaults to D // num_heads.
        dropout: float in [0, 1). Dropout on the two residual branches and
            inside the feed-forward network.
        attention_dropout: float in [0, 1). Dropout on the attention weights.
        activation: activation of the feed-forward network.
        norm_first: bool. Pre-norm instead of post-norm.
        layer_norm_epsilon: float. Epsilon of the layer normalisations.
        attention_block_size: int or None. Local attention: the sequence is
            cut into blocks of this many tokens that attend within, which cuts
            the attention's T x T scores to T x C (long texts train faster).
            None: every token attends to every token.
        kernel_initializer, bias_initializer: initializers of the dense layers.
            The attention and the feed-forward network each get their own
            copy, with their own seed when seeded, and copy it on per weight.
        **kwargs: base layer arguments.

    Call arguments:
        inputs: tensor (B, T, D).
        padding_mask: optional boolean (B, T).
        attention_mask: optional boolean (B, T, T), (T, T), (B, N, T, T) or
            (B, 1, T, T).
        training: bool. Whether dropout is active.
        return_attention_scores: bool. Also return the attention weights.
        use_causal_mask: bool. Token i attends tokens 0..i only (a decoder
            block).
        attention_weights_fn: optional function of the post-softmax weights
            (B, N, T, T) (per local block with `attention_block_size`), passed to
            the attention: attribution methods gate them or stop their gradient.
        detach_norm_scale: bool. No gradient through the layer normalisations'
            1 / std (conservative propagation, Ali et al. 2022); same values.
        head_mask: optional float (N,) or (B, N), passed to the attention:
            multiplies each head's output before the output projection.

    Returns:
        Tensor (B, T, D) and, with `return_attention_scores=True`, the float32
        attention weights (B, N, T, T).

    Example:

    >>> import numpy as np
    >>> block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    >>> outputs, scores = block(np.ones((1, 3, 8), "float32"), return_attention_scores=True)
    >>> tuple(outputs.shape), tuple(scores.shape)
    ((1, 3, 8), (1, 2, 3, 3))
    """

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        key_dim=None,
        dropout=0.0,
        attention_dropout=0.0,
        activation="relu",
        norm_first=False,
        layer_norm_epsilon=1e-5,
        attention_block_size=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_rate("dropout", dropout)
        check_rate("attention_dropout", attention_dropout)
        check_positive("layer_norm_epsilon", layer_norm_epsilon)
        check_positive_int("attention_block_size", attention_block_size, allow_none=True)
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.key_dim = key_dim
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.activation = keras.activations.get(activation)
        self.norm_first = bool(norm_first)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.attention_block_size = attention_block_size
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.supports_masking = True
        # Sub-layers validate the arguments they share with the block (num_heads,
        # key_dim, intermediate_dim), under the same names.
        self.self_attention = MultiHeadAttention(
            num_heads,
            key_dim=key_dim,
            dropout=attention_dropout,
            dtype=self.dtype_policy,
            name="self_attention",
            **self._initializers_for("self_attention"),
        )
        self.feed_forward = FeedForward(
            intermediate_dim,
            activation=self.activation,
            dropout=dropout,
            dtype=self.dtype_policy,
            name="feed_forward",
            **self._initializers_for("feed_forward"),
        )
        self.attention_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="attention_norm"
        )
        self.feed_forward_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="feed_forward_norm"
        )
        # Residual-branch dropouts, set by `dropout`; `attention_dropout` acts inside
        # `self_attention`, on the attention weights. (.keras files find weights by
        # attribute path: only weightless attributes like these may ever be renamed.)
        self.attention_output_dropout_layer = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy, name="attention_output_dropout"
        )
        self.feed_forward_output_dropout_layer = keras.layers.Dropout(
            dropout, dtype=self.dtype_policy, name="feed_forward_output_dropout"
        )

    def _initializers_for(self, sublayer_name):
        return {
            "kernel_initializer": sublayer_initializer(self.kernel_initializer, sublayer_name),
            "bias_initializer": sublayer_initializer(self.bias_initializer, sublayer_name),
        }

    def build(self, input_shape):
        self.self_attention.build(input_shape)
        self.feed_forward.build(input_shape)
        self.attention_norm.build(input_shape)
        self.feed_forward_norm.build(input_shape)

    def call(
        self,
        inputs,
        padding_mask=None,
        attention_mask=None,
        mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
        attention_weights_fn=None,
        detach_norm_scale=False,
        head_mask=None,
    ):
        if padding_mask is None:
            padding_mask = mask
        elif mask is not None:
            padding_mask = ops.logical_and(ops.cast(padding_mask, "bool"), ops.cast(mask, "bool"))

        def attention_norm(x):
            return layer_norm(self.attention_norm, x, detach_norm_scale)

        def feed_forward_norm(x):
            return layer_norm(self.feed_forward_norm, x, detach_norm_scale)

        residual = inputs
        x = attention_norm(inputs) if self.norm_first else inputs
        attend = self._self_attend if self.attention_block_size is None else self._attend_in_blocks
        attended, scores = attend(
            x,
            padding_mask,
            attention_mask,
            training,
            return_attention_scores,
            use_causal_mask,
            attention_weights_fn,
            head_mask,
        )
        x = residual + self.attention_output_dropout_layer(attended, training=training)
        if not self.norm_first:
            x = attention_norm(x)

        residual = x
        if self.norm_first:
            x = feed_forward_norm(x)
        x = residual + self.feed_forward_output_dropout_layer(
            self.feed_forward(x, training=training), training=training
        )
        if not self.norm_first:
            x = feed_forward_norm(x)

        if return_attention_scores:
            return x, scores
        return x

    def _self_attend(
        self,
        x,
        padding_mask,
        attention_mask,
        training,
        return_scores,
        causal,
        weights_fn=None,
        head_mask=None,
    ):
        """(B, T, D) -> (B, T, D) and the (B, N, T, T) weights, or None."""
        attended = self.self_attention(
            x,
            query_mask=padding_mask,
            value_mask=padding_mask,
            attention_mask=attention_mask,
            training=training,
            return_attention_scores=return_scores,
            use_causal_mask=causal,
            attention_weights_fn=weights_fn,
            head_mask=head_mask,
        )
        return attended if return_scores else (attended, None)

    def _attend_in_blocks(
        self,
        x,
        padding_mask,
        attention_mask,
        training,
        return_scores,
        causal,
        weights_fn=None,
        head_mask=None,
    ):
        """`_self_attend` within blocks of `attention_block_size` tokens."""
        if attention_mask is not None:
            raise ValueError(
                "`attention_mask` cannot be combined with `attention_block_size`: the blocks "
                "are the attention mask. Pass `padding_mask`, or set "
                f"attention_block_size=None. Received: attention_block_size="
                f"{self.attention_block_size}"
            )
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        blocks, block_mask = split_into_blocks(x, padding_mask, self.attention_block_size)
        attended, scores = self._self_attend(
            blocks,
            block_mask,
            None,
            training,
            return_scores,
            causal,
            weights_fn,
            head_mask,
        )  # (B * K, C, D), (B * K, N, C, C)
        attended = merge_blocks(attended, batch, length)  # (B, T, D)
        if scores is not None:
            scores = block_diagonal_scores(scores, batch, length)  # (B, N, T, T)
        return attended, scores

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

    def compute_output_spec(self, *args, **kwargs):
        # Trace `call` instead of using `compute_output_shape`, so that the spec
        # also covers the optional attention scores and their float32 dtype.
        return super(keras.layers.Layer, self).compute_output_spec(*args, **kwargs)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "intermediate_dim": self.intermediate_dim,
                "key_dim": self.key_dim,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "activation": keras.activations.serialize(self.activation),
                "norm_first": self.norm_first,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "attention_block_size": self.attention_block_size,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config
