"""Speed of a TransformerEncoderBlock with local attention (`attention_block_size`) against
full attention.

Usage:
    python bench/bench_local_attention.py [--lengths 256 512 1024] [--blocks 64 128]
        [--repeats 10]

One training step (forward + backward, a `tf.function`) of the recipes' block: batch 32,
d_model 64, 2 heads, feed-forward 128, pre-norm, a padding mask on the last eighth of each
sequence, TensorFlow backend. Full attention and each block size run interleaved, one
step each in turn (the order reversed every round), and the table shows medians in
milliseconds and the ratio against full attention measured in the same rounds.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_attention import interleaved_medians_ms  # noqa: E402  (bench/ is the script's folder)

from layers import TransformerEncoderBlock  # noqa: E402

BATCH, D_MODEL, NUM_HEADS, INTERMEDIATE_DIM = 32, 64, 2, 128


def make_train_step(block_size, x, mask):
    block = TransformerEncoderBlock(
        NUM_HEADS, INTERMEDIATE_DIM, norm_first=True, attention_block_size=block_size
    )
    block(x[:, :8], padding_mask=mask[:, :8])  # build on a short slice

    @tf.function
    def train():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(block(x, padding_mask=mask, training=True)))
        return tape.gradient(loss, block.trainable_variables)

    return train


def time_length(length, block_sizes, repeats):
    """Median milliseconds per training step, {block size or None: ms}."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(BATCH, length, D_MODEL)).astype("float32"))
    mask = np.ones((BATCH, length), bool)
    mask[:, length - length // 8 :] = False
    steps = {size: make_train_step(size, x, tf.constant(mask)) for size in [None, *block_sizes]}
    return interleaved_medians_ms(steps, repeats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[256, 512, 1024])
    parser.add_argument("--blocks", type=int, nargs="+", default=[64, 128])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    if args.repeats < 10:
        parser.error(f"--repeats must be at least 10 for stable medians. Received: {args.repeats}")
    print(
        f"batch {BATCH}, d_model {D_MODEL}, {NUM_HEADS} heads, feed-forward "
        f"{INTERMEDIATE_DIM}, TensorFlow {tf.__version__}, Keras {keras.__version__}, "
        f"{os.cpu_count()} CPU cores, median of {args.repeats}"
    )
    print()
    print(
        "| length | full attention (ms) | "
        + " | ".join(f"blocks of {size} (ms) | ratio" for size in args.blocks)
        + " |"
    )
    print("|---:|---:|" + "---:|---:|" * len(args.blocks))
    for length in args.lengths:
        result = time_length(length, args.blocks, args.repeats)
        full = result[None]
        cells = [f"{result[size]:.1f} | {result[size] / full:.2f}" for size in args.blocks]
        print(f"| {length} | {full:.1f} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
