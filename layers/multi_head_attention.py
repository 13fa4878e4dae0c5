"""Multi-head attention with Keras mask support.

Shapes: B batch, T query (sequence) length, S key length, N heads, H head size,
D model size (the query's last dimension). A `v` or `k` marks the value's or
key's own size: Hv value head size, Dv and Dk the value's and key's last dimension.
"""

import keras
from keras import ops
from keras.src.backend import set_keras_mask  # what Keras' layer uses; no public alias

from layers import projections
from layers.argument_checks import check_positive_int, check_rate, output_shape_from_keras_names
from layers.attention_axes import SequenceLayout
from layers.attention_masks import key_side_mask, masked_outputs
from layers.scaled_dot_product_attention import ScaledDotProductAttention


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class MultiHeadAttention(keras.layers.Layer):
    """Multi-head attention (Vaswani et al., 2017).

    Projects the query, key and value with `W_Q`, `W_K`, `W_V` into `num_heads` heads, runs
    `ScaledDotProductAttention` in each head and projects the concatenated heads with `W_O`.
    Works for self-attention (`value` omitted or the same tensor as `query`) and cross-attention
    (query length T may differ from key length S).

    A drop-in replacement for `keras.layers.MultiHeadAttention`: the same arguments
    (`output_shape`, `attention_axes`, `use_gate`, `flash_attention`, the regularizers and
    constraints, ...), the same call, and the projections in the same `EinsumDense` sublayers
    (`query_dense`, `key_dense`, `value_dense`, `gate_dense` with `use_gate`, `output_dense`),
    so the weights have the same shapes and order (`set_weights(keras_mha.get_weights())` gives
    the same layer), and Keras' LoRA (`enable_lora`) and `quantize("int8")` work on them. Inputs
    of higher rank, (B, d1, ..., dk, D), attend over `attention_axes` (default: all of d1..dk)
    with the free axes as batch.

    Masking: masks are boolean, True = attend. The Keras masks of `query`, `value` and `key`
    (e.g. from `Embedding(mask_zero=True)`) are used automatically; explicit `query_mask`
    (B, T), `value_mask` (B, S), `key_mask` (B, S) override them, and `attention_mask` adds to them:
    (B, T, S), (T, S) (the whole batch), (B, N, T, S) (per head) or (B, 1, T, S); another shape
    is a `ValueError`. All masks, the causal and the sliding-window mask are combined with
    logical AND. Padded keys get exactly zero weight; padded queries get all-zero weights, so
    their output is the output bias alone. (Keras' layer ignores an explicit `query_mask` and
    gives padded queries uniform weights; on real queries both layers agree.)

    Args:
        num_heads: int. Number of heads N.
        key_dim: int or None. Size H of each query/key head. Defaults to `D // num_heads` (the
            original Transformer's choice), not D per head.
        value_dim: int or None. Size Hv of each value head. Defaults to H.
        output_dim: int or None. Size of the output. Defaults to D.
        dropout: float in [0, 1). Dropout on the attention weights.
        use_bias: bool. Whether the projections have biases.
        output_shape: int, tuple of ints or None. Keras' name for the output size; a tuple gives
            an output of several trailing dimensions.
        attention_axes: int, tuple of ints or None. The axes attended over; None: all axes but
            the batch and the features.
        sliding_window: int or None. Query i attends keys j with `|i - j| < sliding_window` only
            (with `use_causal_mask`, the `sliding_window` keys up to i).
        flash_attention: bool or None. Whether the fused `keras.ops.dot_product_attention`
            kernel may be used (`ScaledDotProductAttention(use_fused_kernel=...)`); None picks
            by backend.
        causal: bool. Always causal, as if every call passed `use_causal_mask=True`.
        kernel_initializer, bias_initializer: initializers of the projections. Each projection
            gets its own copy, with its own seed when seeded
            (`layers.initializers.sublayer_initializer`), so W_Q, W_K, W_V and W_O never start
            equal.
        kernel_regularizer, bias_regularizer, activity_regularizer, kernel_constraint,
            bias_constraint: of every projection, as in Keras.
        use_gate: bool. Gated attention (Keras' `use_gate`): each head's output is multiplied by
            `sigmoid(gate_dense(query))` before `W_O`.
        seed: int or None. Seed of the attention dropout.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        query: tensor (B, T, D) (or (B, d1, ..., dk, D) with `attention_axes`).
        value: tensor (B, S, Dv), or None for self-attention.
        key: tensor (B, S, Dk), or None to use `value`.
        query_mask, value_mask, key_mask: optional boolean (B, T) / (B, S).
        attention_mask: optional boolean (B, T, S), (T, S), (B, N, T, S) or (B, 1, T, S).
        return_attention_scores: bool. Also return the attention weights.
        training: bool. Whether dropout is active.
        use_causal_mask: bool. Query i attends keys 0..i only.
        attention_weights_fn: optional function of the post-softmax weights `(B, N, T, S)`,
            passed to `ScaledDotProductAttention`.
        head_mask: optional float (N,), or (B, N) per example: multiplies each head's output
            before the output projection (Michel et al., 2019); 0 switches a head off. Its
            gradient is the head's importance.

    Returns:
        Output (B, T, output_dim) and, with `return_attention_scores=True`, the float32
        post-softmax weights (B, N, T, S); for higher-rank inputs Keras' layouts,
        (B, d1, ..., dk, *output_shape) and (B, free axes..., N, T..., S...).

    Example:
    >>> import numpy as np
    >>> tokens = keras.Input((None,), dtype="int32")
    >>> x = keras.layers.Embedding(100, 16, mask_zero=True)(tokens)
    >>> y, scores = MultiHeadAttention(num_heads=4)(x, return_attention_scores=True)
    >>> model = keras.Model(tokens, scores)
    >>> model.predict(np.array([[5, 7, 0]]), verbose=0)[0, 0, 0, 2]  # head 0, query 0, padded key
    np.float32(0.0)
    """

    def __init__(
        self,
        num_heads,
        key_dim=None,
        value_dim=None,
        output_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        sliding_window=None,
        flash_attention=None,
        causal=False,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        use_gate=False,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._output_shape = output_shape_from_keras_names(output_dim, output_shape)
        check_positive_int("num_heads", num_heads)
        check_positive_int("key_dim", key_dim, allow_none=True)
        check_positive_int("value_dim", value_dim, allow_none=True)
        check_positive_int("sliding_window", sliding_window, allow_none=True)
        check_rate("dropout", dropout)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.value_dim = value_dim
        one_dim = self._output_shape is not None and len(self._output_shape) == 1
        self.output_dim = self._output_shape[0] if one_dim else None
        self.dropout = float(dropout)
        self.use_bias = use_bias
        self.attention_axes = attention_axes
        self.sliding_window = sliding_window
        self.flash_attention = flash_attention
        self.causal = bool(causal)
        self.use_gate = bool(use_gate)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.bias_regularizer = keras.regularizers.get(bias_regularizer)
        # Not the base layer's activity regularizer, which would act on the output only.
        self.projection_activity_regularizer = keras.regularizers.get(activity_regularizer)
        self.kernel_constraint = keras.constraints.get(kernel_constraint)
        self.bias_constraint = keras.constraints.get(bias_constraint)
        self.seed = seed
        self.supports_masking = True
        self.attention = ScaledDotProductAttention(
            causal=causal,
            dropout=dropout,
            seed=seed,
            use_fused_kernel=flash_attention,
            dtype=self.dtype_policy,
            name="attention",
        )

    def build(self, query_shape, value_shape=None, key_shape=None):
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        self.compute_output_shape(query_shape, value_shape, key_shape)  # checks the shapes
        self._layout = SequenceLayout(len(query_shape), self.attention_axes)
        self._head_dim, self._value_head_dim = projections.head_sizes(
            query_shape[-1], self.num_heads, self.key_dim, self.value_dim
        )
        built = projections.attention_projections(
            query_shape,
            value_shape,
            key_shape,
            (self.num_heads, self._head_dim),
            (self.num_heads, self._value_head_dim),
            self._output_shape or (query_shape[-1],),
            use_gate=self.use_gate,
            use_bias=self.use_bias,
            dtype=self.dtype_policy,
            **projections.projection_arguments(self),
        )
        # Tracked in keras.layers.MultiHeadAttention's order, which is its weights' order.
        self._query_dense = built["query"]
        self._key_dense = built["key"]
        self._gate_dense = built["gate"]
        self._value_dense = built["value"]
        self._output_dense = built["output"]

    query_dense = property(lambda self: self._query_dense)
    key_dense = property(lambda self: self._key_dense)
    value_dense = property(lambda self: self._value_dense)
    gate_dense = property(lambda self: self._gate_dense)
    output_dense = property(lambda self: self._output_dense)

    def enable_lora(self, rank, targets=("query", "value"), lora_alpha=None):
        """Keras' LoRA on the `targets` projections ("query", "key", "value", "gate",
        "output"): each kernel frozen, two trained low-rank factors added to it."""
        if not self.built:
            raise ValueError(
                "Cannot enable lora on a layer that isn't yet built: call it or "
                f"build it first. Received: {self.name!r}, not built"
            )
        projections.check_lora_targets(targets, self.use_gate)
        for target in targets:
            getattr(self, f"{target}_dense").enable_lora(rank, lora_alpha=lora_alpha)

    def call(
        self,
        query,
        value=None,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
        mask=None,
        attention_weights_fn=None,
        head_mask=None,
    ):
        # Keras fills `<arg>_mask` from the inputs' masks when several tensors
        # are passed, but only `mask` when the query is the one tensor argument.
        if query_mask is None:
            query_mask = mask
        if value is None:
            value, value_mask = query, query_mask if value_mask is None else value_mask
        if key is None:
            key, key_mask = value, value_mask if key_mask is None else key_mask
        for tensor in (query, key, value):
            # Read above; taken off so the projections do not warn (as Keras' layer does).
            set_keras_mask(tensor, None)
        layout, query_shape, key_shape = self._layout, ops.shape(query), ops.shape(key)
        attention_mask = layout.attention_mask(attention_mask, query_shape, key_shape)
        head_mask = layout.per_example(head_mask, query_shape)
        query, key, value, query_mask, value_mask, key_mask = (
            layout.to_sequences(x) for x in (query, key, value, query_mask, value_mask, key_mask)
        )
        query, key, value = (ops.cast(x, self.compute_dtype) for x in (query, key, value))

        query_heads = projections.project(self._query_dense, query)  # (B, T, N, H)
        key_heads = projections.project(self._key_dense, key)  # (B, S, N, H)
        value_heads = projections.project(self._value_dense, value)  # (B, S, N, Hv)

        # Key padding and attention masks go into the softmax; padded queries are
        # zeroed afterwards, which is cheaper than a full (B, 1, T, S) mask.
        mask = key_side_mask(
            query, key, self.num_heads, value_mask, key_mask, attention_mask, self.sliding_window
        )
        result = self.attention(
            query_heads,
            key_heads,
            value_heads,
            attention_mask=mask,
            training=training,
            return_attention_scores=return_attention_scores,
            use_causal_mask=use_causal_mask,
            attention_weights_fn=attention_weights_fn,
        )
        attended, scores = result if return_attention_scores else (result, None)
        attended, scores = masked_outputs(attended, scores, query_mask, head_mask)
        if self.use_gate:
            attended = attended * projections.project(self._gate_dense, query)  # (B, T, N, Hv)
        output = projections.project(self._output_dense, attended, input_dims=2)  # (B, T, *out)
        output = layout.from_sequences(output, query_shape)
        if return_attention_scores:
            return output, layout.scores_from_sequences(scores, query_shape, key_shape)
        return output

    def compute_mask(self, query, previous_mask=None):
        # The output is aligned with the queries, so it keeps the query mask.
        return previous_mask

    def compute_output_spec(self, *args, **kwargs):
        # Trace `call` instead of using `compute_output_shape`, so that the spec
        # also covers the optional attention scores and their float32 dtype.
        return super(keras.layers.Layer, self).compute_output_spec(*args, **kwargs)

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        value_shape = tuple(query_shape if value_shape is None else value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if value_shape[1:-1] != key_shape[1:-1]:
            raise ValueError(
                "All dimensions of `value` and `key`, except the last one, must be equal. "
                f"Received: value_shape={value_shape} and key_shape={key_shape}"
            )
        return tuple(query_shape[:-1]) + (self._output_shape or (query_shape[-1],))

    def get_config(self):
        several = self._output_shape is not None and len(self._output_shape) > 1
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "output_dim": self.output_dim,  # None when the output has several axes
            "output_shape": list(self._output_shape) if several else None,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "attention_axes": self.attention_axes,
            "sliding_window": self.sliding_window,
            "flash_attention": self.flash_attention,
            "causal": self.causal,
            "use_gate": self.use_gate,
            # Keras' initializers, regularizers and constraints serialize alike.
            **{
                name: keras.saving.serialize_keras_object(value)
                for name, value in projections.projection_arguments(self).items()
            },
            "seed": self.seed,
        }
