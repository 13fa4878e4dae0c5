"""Scaled dot-product attention, softmax(Q K^T / sqrt(H)) V.

Shapes: B batch, T query (sequence) length, S key length, N heads, H head size
(of queries and keys, the paper's d_k), Hv value head size (the paper's d_v).
"""

import math

import keras
from keras import ops

from layers.argument_checks import check_positive, check_rate
from layers.attention_masks import all_of, attention_mask_4d, causal_mask

# Bias of masked logits. The logits are always float32 here (see `call`), so a large
# finite negative is safe; -inf would turn a fully masked row into NaN.
_MASKED_LOGIT = -1e9
# Backends whose `ops.dot_product_attention` dispatches to a fused kernel (jax.nn's
# cuDNN/XLA attention, torch's scaled_dot_product_attention). Keras' TensorFlow version
# is an einsum composition with extra passes over the (B, N, T, S) logits (scaling,
# mask broadcasting) and measured slower than `_explicit_attention` (bench/).
_FUSED_KERNEL_BACKENDS = ("jax", "torch")
# Largest finite float16. float16 logits that overflowed to +-inf are clipped to it so the
# float32 softmax never sees inf - inf = NaN.
_FLOAT16_MAX = 65504.0


@keras.saving.register_keras_serializable(package="keras_attention_lab")
class ScaledDotProductAttention(keras.layers.Layer):
    """Scaled dot-product attention: `softmax(Q K^T / sqrt(H)) V`.

    Attends `T` queries to `S` keys/values. Inputs are either single-head,
    `query (B, T, H)`, `key (B, S, H)`, `value (B, S, Hv)`, or multi-head
    in the `keras.ops.dot_product_attention` layout, `(B, T, N, H)`,
    `(B, S, N, H)`, `(B, S, N, Hv)`. `H` and `Hv` are independent.

    The softmax over the key axis is always computed in float32, also under a
    `mixed_float16` policy, and the masked-fill value is applied in float32, so
    nothing overflows. When no scores are requested and dropout is inactive
    (rate 0, or inference), the fused `keras.ops.dot_product_attention` kernel is
    used (when `H == Hv`, which fused kernels require); otherwise the scores
    are computed explicitly. By default the fused kernel is used on the JAX and
    PyTorch backends; on TensorFlow, Keras implements it as plain ops that
    measured slower than the explicit path, which is used instead.

    Masking: `attention_mask` is boolean, True = attend, of shape `(B, T, S)`
    (one mask per example, shared by the heads), `(T, S)` (one for the whole
    batch), or, for multi-head inputs, `(B, N, T, S)` (one per head) or
    `(B, 1, T, S)`; any other shape is a `ValueError`. With `causal=True` or
    `use_causal_mask=True` query `i` may attend keys `0..i` only; the causal
    mask is combined with `attention_mask` by logical AND. Masked keys get
    exactly zero weight; a query whose keys are all masked gets all-zero
    weights and a zero output, never NaN.

    Args:
        causal: bool. Always apply a causal (lower-triangular) mask, as if every
            call passed `use_causal_mask=True`. Defaults to False.
        dropout: float in [0, 1). Dropout on the attention weights during
            training. Defaults to 0.
        scale: float or None. Multiplier of the logits; None means
            `1 / sqrt(H)`.
        seed: int or None. Seed of the attention dropout.
        use_fused_kernel: bool or None. Whether the fast path (no scores, no
            active dropout) calls `keras.ops.dot_product_attention`. None picks
            by backend: yes on JAX and PyTorch, no on TensorFlow.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        query: tensor `(B, T, H)` or `(B, T, N, H)`.
        key: tensor `(B, S, H)` or `(B, S, N, H)`.
        value: tensor `(B, S, Hv)` or `(B, S, N, Hv)`.
        attention_mask: optional boolean tensor, `(B, T, S)`, `(T, S)`,
            `(B, N, T, S)` or `(B, 1, T, S)`.
        training: bool. Whether dropout is active.
        return_attention_scores: bool. Also return the attention weights.
        use_causal_mask: bool. Apply the causal mask in this call.
        attention_weights_fn: optional function applied to the float32 post-softmax
            weights `(B, N, T, S)` before they mix the values, for attribution methods
            that gate them or stop their gradient; it must keep their values. It takes
            the explicit (non-fused) path.

    Returns:
        The attention output, `(B, T, Hv)` or `(B, T, N, Hv)` and, when
        `return_attention_scores=True`, the float32 post-softmax weights,
        `(B, T, S)` or `(B, N, T, S)`.

    Example:

    >>> import numpy as np
    >>> attention = ScaledDotProductAttention()
    >>> query = np.full((1, 1, 4), 0.5, "float32")
    >>> key = value = np.eye(4, dtype="float32")[None]
    >>> output, scores = attention(query, key, value, return_attention_scores=True)
    >>> ops.convert_to_numpy(output).round(2).tolist()
    [[[0.25, 0.25, 0.25, 0.25]]]
    """

    def __init__(
        self, causal=False, dropout=0.0, scale=None, seed=None, use_fused_kernel=None, **kwargs
    ):
        super().__init__(**kwargs)
        check_rate("dropout", dropout)
        check_positive("scale", scale, allow_none=True)
        self.causal = bool(causal)
        self.dropout = float(dropout)
        self.scale = scale
        self.seed = seed
        self.use_fused_kernel = use_fused_kernel
        if use_fused_kernel is None:
            use_fused_kernel = keras.backend.backend() in _FUSED_KERNEL_BACKENDS
        self._use_fused_kernel = bool(use_fused_kernel)
        self.supports_masking = False
        self._dropout_layer = keras.layers.Dropout(dropout, seed=seed, dtype=self.dtype_policy)
        self.built = True

    def call(
        self,
        query,
        key,
        value,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
        attention_weights_fn=None,
    ):
        single_head = len(query.shape) == 3
        if single_head:
            # (B, T, H) -> (B, T, 1, H), the same for key and value: one code path.
            query, key, value = (ops.expand_dims(x, 2) for x in (query, key, value))
        mask = self._combined_mask(
            query, key, attention_mask, self.causal or use_causal_mask, single_head
        )
        dropout_active = self.dropout > 0.0 and bool(training)
        # Fused kernels (JAX's, cuDNN's) require equal query/key and value head sizes.
        fusable = self._use_fused_kernel and query.shape[-1] == value.shape[-1]
        explicit = return_attention_scores or dropout_active or attention_weights_fn is not None
        if fusable and not explicit:
            output, scores = self._fused_attention(query, key, value, mask), None
        else:
            output, scores = self._explicit_attention(
                query, key, value, mask, training, return_attention_scores, attention_weights_fn
            )
        if single_head:
            output = ops.squeeze(output, 2)  # (B, T, Hv)
            if scores is not None:
                scores = ops.squeeze(scores, 1)  # (B, T, S)
        if return_attention_scores:
            return output, scores
        return output

    def _scale_for(self, query):
        if self.scale is not None:
            return float(self.scale)
        return 1.0 / math.sqrt(query.shape[-1])

    @staticmethod
    def _combined_mask(query, key, attention_mask, causal, single_head):
        """Boolean (B|1, N|1, T, S) mask, True = attend, or None.

        `query` and `key` are in the multi-head layout (B, T, N, H) and (B, S, N, H).
        """
        masks = []
        if attention_mask is not None:
            num_heads = None if single_head else query.shape[2]
            masks.append(attention_mask_4d(attention_mask, num_heads, query.shape[1], key.shape[1]))
        if causal:
            masks.append(causal_mask(ops.shape(query)[1], ops.shape(key)[1]))
        return all_of(masks)

    @staticmethod
    def _logit_bias(mask):
        """Additive float32 logit bias, (B|1, N|1, T|1, S).

        An added bias costs one pass over the logits, where a boolean `where` costs
        several; exp(-1e9 - max) is exactly 0 in float32, so masked keys still get
        exactly zero weight.
        """
        return ops.where(mask, 0.0, _MASKED_LOGIT)

    @staticmethod
    def _zero_rows(output, has_key):
        """Zero the (B, T, N, Hv) outputs of queries whose keys are all masked.

        The softmax gives such rows uniform weights; a (B, T, N, 1) multiply is far
        cheaper than masking the (B, N, T, S) weights again. `has_key` is
        `any(mask, axis=-1, keepdims=True)`, (B|1, N|1, T|1, 1).
        """
        has_key = ops.transpose(has_key, (0, 2, 1, 3))  # (B|1, T|1, N|1, 1)
        return output * ops.cast(has_key, output.dtype)

    def _fused_attention(self, query, key, value, mask):
        scale = self._scale_for(query)
        if keras.backend.standardize_dtype(query.dtype) == "float16":
            # Backends compute the logits in float16 and scale them afterwards, so
            # pre-scale the queries to keep them in range. A bias would be cast to
            # float16, where -1e9 is -inf (NaN rows); a boolean mask is applied after
            # the float32 cast instead.
            query = query * ops.cast(scale, query.dtype)
            output = ops.dot_product_attention(query, key, value, mask=mask, scale=1.0)
        elif mask is None:
            output = ops.dot_product_attention(query, key, value, scale=scale)
        else:
            bias = self._logit_bias(mask)
            output = ops.dot_product_attention(query, key, value, bias=bias, scale=scale)
        if mask is None:
            return output
        return self._zero_rows(output, ops.any(mask, axis=-1, keepdims=True))

    def _explicit_attention(
        self, query, key, value, mask, training, return_scores=True, attention_weights_fn=None
    ):
        # Scale the (T, H) queries, not the (T, S) logits: cheaper, same result.
        query = query * ops.cast(self._scale_for(query), query.dtype)
        logits = ops.einsum("btnh,bsnh->bnts", query, key)  # (B, N, T, S)
        low_precision = keras.backend.standardize_dtype(logits.dtype) == "float16"
        logits = ops.cast(logits, "float32")
        if low_precision:
            logits = ops.clip(logits, -_FLOAT16_MAX, _FLOAT16_MAX)
        if mask is not None:
            logits = logits + self._logit_bias(mask)
        scores = ops.softmax(logits, axis=-1)
        if attention_weights_fn is not None:
            scores = attention_weights_fn(scores)  # (B, N, T, S), the same values
        weights = ops.cast(self._dropout_layer(scores, training=training), value.dtype)
        output = ops.einsum("bnts,bsnh->btnh", weights, value)  # (B, T, N, Hv)
        if mask is not None:
            has_key = ops.any(mask, axis=-1, keepdims=True)  # (B|1, N|1, T|1, 1)
            output = self._zero_rows(output, has_key)
            if return_scores:
                # Exactly zero weights for rows with no key to attend (not uniform ones).
                scores = scores * ops.cast(has_key, scores.dtype)
        return output, scores if return_scores else None

    def compute_output_spec(self, *args, **kwargs):
        # Trace `call` instead of using `compute_output_shape`, so that the spec
        # also covers the optional attention scores and their float32 dtype.
        return super(keras.layers.Layer, self).compute_output_spec(*args, **kwargs)

    def compute_output_shape(self, query_shape, key_shape, value_shape):
        return tuple(query_shape[:-1]) + (value_shape[-1],)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "causal": self.causal,
                "dropout": self.dropout,
                "scale": self.scale,
                "seed": self.seed,
                "use_fused_kernel": self.use_fused_kernel,
            }
        )
        return config
