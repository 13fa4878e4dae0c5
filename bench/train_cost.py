"""What a training epoch costs: real tokens, executed FLOPs, seconds, and the machine's peak.

Used by bench_accuracy.py. FLOPs are counted analytically from the model config and the
shapes the train step really runs (nanoGPT's `estimate_mfu` does the same): one
multiply-add is 2 FLOPs and a training step costs 3 forward passes (forward, then the
gradients with respect to activations and to weights). Embedding lookups, softmax, layer
norms and the optimizer are left out: they are memory-bound and small next to the matmuls.
"""

import statistics
import time

import numpy as np


def forward_flops(model, num_classes, batch, length):
    """FLOPs of one forward pass of the classifier on `batch` sequences of `length` tokens.

    `model` is a `config.ModelConfig`; `length` is the padded length the step computes on.
    Per block: Q, K, V and output projections 8·T·D·N·K, scores and weighted sum 4·N·K·T²,
    feed-forward 4·T·D·I; then the head. With `attention_block_size` C < T, attention runs
    on T' = ceil(T / C)·C positions (the last block filled up): projections 8·T'·D·N·K,
    scores and weighted sum 4·N·K·T'·C.
    """
    length = length + (model.pooling == "cls")  # the class token is one more position
    heads = model.num_heads * (model.key_dim or model.d_model // model.num_heads)  # N·K
    span = min(model.attention_block_size or length, length)  # keys each query sees
    attended = -(-length // span) * span  # T', positions through the attention
    block = (
        8 * attended * model.d_model * heads
        + 4 * heads * attended * span
        + 4 * length * model.d_model * model.intermediate_dim
    )
    head_in = model.head_hidden_dim or model.d_model
    head = 2 * model.d_model * model.head_hidden_dim + 2 * head_in * num_classes
    return batch * (model.num_layers * block + head)


def epoch_cost(train_batches, model, num_classes):
    """(real tokens, executed training FLOPs) of one pass over `train_batches`.

    `train_batches` yields (token ids (B, T), labels) as the trainer sees them: T is the
    batch's padded length, id 0 is padding.
    """
    tokens, flops = 0, 0
    for token_ids, _ in train_batches:
        token_ids = np.asarray(token_ids)
        tokens += int(np.count_nonzero(token_ids))
        flops += 3 * forward_flops(model, num_classes, *token_ids.shape)
    return tokens, flops


def matmul_peak_flops(size=2048, repeats=7):
    """This machine's float32 matmul rate (FLOP/s): median of `repeats` (size x size) @
    (size x size) products through TensorFlow, on all the cores TensorFlow uses."""
    import tensorflow as tf

    a = tf.random.stateless_normal((size, size), seed=(0, 1))
    b = tf.random.stateless_normal((size, size), seed=(0, 2))
    product = tf.function(lambda: tf.reduce_sum(tf.matmul(a, b)))
    product().numpy()  # trace and warm up
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        product().numpy()
        seconds.append(time.perf_counter() - start)
    return 2 * size**3 / statistics.median(seconds)


def epoch_timer():
    """A Keras callback whose `seconds` lists each epoch's training time (first batch
    start to last batch end; validation excluded)."""
    import keras

    class EpochTimer(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seconds = []

        def on_epoch_begin(self, epoch, logs=None):
            self.start = self.end = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            self.end = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.seconds.append(self.end - self.start)

    return EpochTimer()
