"""Our MultiHeadAttention in place of Keras' in real models: one changed class, same numbers.

The two blocks are those of the keras.io examples "Text classification with Transformer"
(an encoder block, no mask) and "Text generation with a miniature GPT" (a causal decoder
block), written as there with the attention class as the one free choice. Each model is
built with `keras.layers.MultiHeadAttention` and with ours, the same constructor and call
arguments, Keras' weights copied into ours: the outputs and one SGD step (learning rate 1,
so the weight change is minus the gradient) must agree. Runs on every backend (`make test`).
"""

import keras
import numpy as np
import pytest
from keras import ops

from layers import MultiHeadAttention
from tests.layers.layer_test_case import to_numpy

VOCABULARY, LENGTH, EMBED_DIM, NUM_HEADS, FF_DIM = 50, 7, 16, 2, 32


def causal_attention_mask(batch_size, n_dest, n_src, dtype):
    """The miniature GPT example's mask, (B, T, S), lower triangle True.

    (The example tiles it with a concatenated multiples tensor, which symbolic TensorFlow
    shapes refuse; `broadcast_to` gives the same tensor.)
    """
    i = ops.arange(n_dest)[:, None]
    j = ops.arange(n_src)
    mask = ops.cast(i >= j - n_src + n_dest, dtype)
    return ops.broadcast_to(mask[None], (batch_size, n_dest, n_src))


class KerasIoBlock(keras.layers.Layer):
    """The Transformer block both keras.io examples write out, around `attention`:
    attention, dropout, residual + LayerNorm, feed-forward, dropout, residual + LayerNorm.
    Each example's subclass builds and calls the attention as that example does."""

    def __init__(self, attention, embed_dim, ff_dim, rate=0.0):
        super().__init__()
        self.att = attention  # first: the weights keep the examples' order
        self.ffn = keras.Sequential(
            [keras.layers.Dense(ff_dim, activation="relu"), keras.layers.Dense(embed_dim)]
        )
        self.layernorm1 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = keras.layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = keras.layers.Dropout(rate)
        self.dropout2 = keras.layers.Dropout(rate)

    def attend(self, inputs):
        raise NotImplementedError

    def call(self, inputs):
        attn_output = self.dropout1(self.attend(inputs))
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.dropout2(self.ffn(out1))
        return self.layernorm2(out1 + ffn_output)


class TextClassificationBlock(KerasIoBlock):
    """keras.io "Text classification with Transformer": TransformerBlock."""

    def __init__(self, attention_class, embed_dim, num_heads, ff_dim, rate=0.0):
        super().__init__(
            attention_class(num_heads=num_heads, key_dim=embed_dim), embed_dim, ff_dim, rate
        )

    def attend(self, inputs):
        return self.att(inputs, inputs)


class MiniatureGPTBlock(KerasIoBlock):
    """keras.io "Text generation with a miniature GPT": TransformerBlock.

    `causal` picks how the causal mask reaches the attention: the example's own (B, T, S)
    `attention_mask`, Keras' `use_causal_mask=True`, or one (T, S) mask for the batch.
    """

    def __init__(self, attention_class, embed_dim, num_heads, ff_dim, causal, rate=0.0):
        super().__init__(attention_class(num_heads, embed_dim), embed_dim, ff_dim, rate)
        self.causal = causal

    def attend(self, inputs):
        batch_size, seq_len = ops.shape(inputs)[0], ops.shape(inputs)[1]
        if self.causal == "use_causal_mask":
            return self.att(inputs, inputs, use_causal_mask=True)
        if self.causal == "batch_mask":
            mask = causal_attention_mask(batch_size, seq_len, seq_len, "bool")
        else:
            mask = ops.tril(ops.ones((seq_len, seq_len), "bool"))  # (T, S)
        return self.att(inputs, inputs, attention_mask=mask)


def build_model(block, num_outputs, per_token):
    keras.utils.set_random_seed(0)
    tokens = keras.Input((LENGTH,), dtype="int32")
    x = keras.layers.Embedding(VOCABULARY, EMBED_DIM)(tokens)
    positions = keras.layers.Embedding(LENGTH, EMBED_DIM)(ops.arange(LENGTH)[None])
    x = block(x + positions)
    if not per_token:
        x = keras.layers.GlobalAveragePooling1D()(x)
    outputs = keras.layers.Dense(num_outputs)(x)
    model = keras.Model(tokens, outputs)
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        jit_compile=False,  # one step: compiling costs more than it saves
    )
    return model


def assert_swap_gives_same_outputs_and_gradients(make_block, num_outputs, per_token):
    theirs = build_model(make_block(keras.layers.MultiHeadAttention), num_outputs, per_token)
    ours = build_model(make_block(MultiHeadAttention), num_outputs, per_token)
    their_weights = theirs.get_weights()
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in their_weights]
    ours.set_weights(their_weights)

    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCABULARY, size=(4, LENGTH)).astype("int32")
    target_shape = (4, LENGTH) if per_token else (4,)
    targets = rng.integers(0, num_outputs, size=target_shape).astype("int32")
    np.testing.assert_allclose(
        to_numpy(ours(tokens)), to_numpy(theirs(tokens)), rtol=1e-5, atol=1e-5
    )

    their_loss = theirs.train_on_batch(tokens, targets)
    our_loss = ours.train_on_batch(tokens, targets)
    np.testing.assert_allclose(our_loss, their_loss, rtol=1e-6)
    moved = 0
    for before, our_after, their_after in zip(
        their_weights, ours.get_weights(), theirs.get_weights()
    ):
        # The weight change of an SGD step at learning rate 1 is minus the gradient.
        np.testing.assert_allclose(our_after - before, their_after - before, atol=1e-5)
        moved += not np.allclose(their_after, before)
    assert moved >= len(their_weights) - 1  # all but the key bias (gradient 0 in both)


def test_text_classification_block_swaps_in():
    assert_swap_gives_same_outputs_and_gradients(
        lambda attention: TextClassificationBlock(attention, EMBED_DIM, NUM_HEADS, FF_DIM),
        num_outputs=2,
        per_token=False,
    )


@pytest.mark.parametrize("causal", ["batch_mask", "use_causal_mask", "one_mask_for_the_batch"])
def test_miniature_gpt_block_swaps_in(causal):
    assert_swap_gives_same_outputs_and_gradients(
        lambda attention: MiniatureGPTBlock(attention, EMBED_DIM, NUM_HEADS, FF_DIM, causal),
        num_outputs=VOCABULARY,
        per_token=True,
    )
