"""Speed and memory of our MultiHeadAttention against keras.layers.MultiHeadAttention.

Usage:
    make bench
    python bench/bench_attention.py [--lengths 64 256 1024] [--repeats 10] [--no-memory]

Self-attention with batch 32, d_model 128, 4 heads (key_dim 32) and a padding mask on the
last eighth of each sequence, on the TensorFlow backend. Each step is a `tf.function` (the
same compilation for both layers); the two layers run interleaved, one step each in turn
(alternating which goes first), and the table shows medians in milliseconds and the ratio
ours / Keras. Peak memory is the
growth of the process's peak resident memory during one training step, measured in a fresh
subprocess per layer so the two do not share allocator pools.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from layers import MultiHeadAttention  # noqa: E402

BATCH, D_MODEL, NUM_HEADS = 32, 128, 4
MODES = ("train", "infer", "infer+scores")


def make_layer(implementation):
    if implementation == "ours":
        return MultiHeadAttention(num_heads=NUM_HEADS)
    return keras.layers.MultiHeadAttention(num_heads=NUM_HEADS, key_dim=D_MODEL // NUM_HEADS)


def make_inputs(length):
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(BATCH, length, D_MODEL)).astype("float32"))
    mask = np.ones((BATCH, length), bool)
    mask[:, length - length // 8 :] = False
    return x, tf.constant(mask)


def make_steps(layer, x, mask):
    """One tf.function per mode, the same for both layers."""
    # Build on a short slice: an eager full-length call would set the peak memory early.
    layer(x[:, :8], x[:, :8], query_mask=mask[:, :8], value_mask=mask[:, :8])

    @tf.function
    def train():
        with tf.GradientTape() as tape:
            output = layer(x, x, query_mask=mask, value_mask=mask, training=True)
            loss = tf.reduce_mean(tf.square(output))
        return tape.gradient(loss, layer.trainable_variables)

    @tf.function
    def infer():
        return layer(x, x, query_mask=mask, value_mask=mask)

    @tf.function
    def infer_with_scores():
        return layer(x, x, query_mask=mask, value_mask=mask, return_attention_scores=True)

    return {"train": train, "infer": infer, "infer+scores": infer_with_scores}


def run_once(step):
    """Seconds of one call of `step`, up to its returned tensors' values (a step that
    returns none, or plain values, has finished when it returns)."""
    start = time.perf_counter()
    tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, step())
    return time.perf_counter() - start


def interleaved_medians_ms(steps, repeats, warmups=2):
    """Median milliseconds of each of `steps` ({name: callable}), timed in turn `repeats`
    times after `warmups` untimed runs each (tracing, the first run)."""
    for step in steps.values():
        for _ in range(warmups):
            run_once(step)
    times = {name: [] for name in steps}
    order = list(steps)
    for _ in range(repeats):
        for name in order:
            times[name].append(run_once(steps[name]))
        order.reverse()  # ABBA: no step always runs right after the same other one
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


def time_length(length, repeats):
    x, mask = make_inputs(length)
    steps = {name: make_steps(make_layer(name), x, mask) for name in ("ours", "keras")}
    return {mode: interleaved_medians_ms({name: steps[name][mode] for name in steps}, repeats)
            for mode in MODES}


def peak_memory_mib(implementation, length):
    """Peak RSS growth (MiB) of one training step, in a fresh process."""
    completed = subprocess.run(
        [sys.executable, __file__, "--memory-child", implementation, str(length)],
        capture_output=True, text=True, check=True,
    )
    return float(completed.stdout.strip().splitlines()[-1])


def memory_child(implementation, length):
    x, mask = make_inputs(length)
    train = make_steps(make_layer(implementation), x, mask)["train"]
    train.get_concrete_function()  # trace outside the measured step
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run_once(train)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print((after - before) / 1024)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child[0], int(args.memory_child[1]))
        return 0
    if args.repeats < 10:
        parser.error(f"--repeats must be at least 10 for stable medians. Received: {args.repeats}")

    print(f"batch {BATCH}, d_model {D_MODEL}, {NUM_HEADS} heads, TensorFlow {tf.__version__}, "
          f"Keras {keras.__version__}, {os.cpu_count()} CPU cores, median of {args.repeats}")
    print()
    print("| length | mode | ours (ms) | Keras (ms) | ours / Keras |")
    print("|---:|---|---:|---:|---:|")
    for length in args.lengths:
        results = time_length(length, args.repeats)
        for mode in MODES:
            ours, theirs = results[mode]["ours"], results[mode]["keras"]
            print(f"| {length} | {mode} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |",
                  flush=True)
    if not args.no_memory:
        length = max(args.lengths)
        ours, theirs = peak_memory_mib("ours", length), peak_memory_mib("keras", length)
        print()
        print("| length | peak memory growth, one training step | ours (MiB) | Keras (MiB) |"
              " ours / Keras |")
        print("|---:|---|---:|---:|---:|")
        print(f"| {length} | train | {ours:.0f} | {theirs:.0f} | {ours / theirs:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
