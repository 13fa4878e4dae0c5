"""Speed and memory of our MultiHeadAttention against keras.layers.MultiHeadAttention.

Usage:
    make bench
    python bench/bench_attention.py [--lengths 64 256 1024] [--repeats 10] [--no-memory]
    python bench/bench_attention.py --tiny  # two short lengths, 3 repeats: the suite's check

Self-attention with batch 32, d_model 128, 4 heads (key_dim 32) and a padding mask on the
last eighth of each sequence, on the TensorFlow backend. Each step is a `tf.function` (the
same compilation for both layers); the two layers run interleaved, one step each in turn
(alternating which goes first), and the table shows medians in milliseconds and the ratio
ours / Keras. Peak memory is what one training step allocates beyond what was allocated
before it: the peak of TensorFlow's allocator statistics (`get_memory_info`) over the step,
minus its bytes in use at the start. TensorFlow keeps those statistics on GPU, and on CPU
only with its BFC allocator, so they are read in a fresh subprocess started with
`TF_CPU_ALLOCATOR_USE_BFC=true`. They count the tensors a step allocates, not the pages the
process holds: the growth of the peak resident memory read 0 MiB when the step fitted into
pages an earlier allocation had left. Where the statistics are not available the table says
"not measurable here".
"""

import argparse
import os
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
IMPLEMENTATIONS = ("ours", "keras")
# --tiny: enough to see every row and ratio, in seconds.
TINY_LENGTHS, TINY_REPEATS = (16, 32), 3
NOT_MEASURABLE = "not measurable here"


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
    steps = {name: make_steps(make_layer(name), x, mask) for name in IMPLEMENTATIONS}
    return {
        mode: interleaved_medians_ms({name: steps[name][mode] for name in steps}, repeats)
        for mode in MODES
    }


def peak_memory_mib(length):
    """{implementation: MiB one training step allocates}, measured in a fresh process whose
    CPU allocator keeps statistics; None where TensorFlow keeps none (the child says so)."""
    completed = subprocess.run(
        [sys.executable, __file__, "--memory-child", str(length)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TF_CPU_ALLOCATOR_USE_BFC": "true"},
    )
    found = dict(
        line.split()
        for line in completed.stdout.splitlines()
        if line.split()[:1] and line.split()[0] in IMPLEMENTATIONS
    )
    return {
        name: None if found.get(name, "none") == "none" else float(found[name])
        for name in IMPLEMENTATIONS
    }


def memory_child(length):
    """Prints "<implementation> <MiB>" per layer: the allocator's peak during one training
    step minus its bytes in use before it ("none" without allocator statistics)."""
    device = "GPU:0" if tf.config.list_physical_devices("GPU") else "CPU:0"
    x, mask = make_inputs(length)
    trains = {name: make_steps(make_layer(name), x, mask)["train"] for name in IMPLEMENTATIONS}
    for train in trains.values():
        train.get_concrete_function()  # trace outside the measured step
    for name, train in trains.items():
        try:
            tf.config.experimental.reset_memory_stats(device)
            before = tf.config.experimental.get_memory_info(device)["current"]
        except ValueError:  # "Allocator stats not available"
            print(name, "none")
            continue
        run_once(train)
        peak = tf.config.experimental.get_memory_info(device)["peak"]
        print(name, (peak - before) / 2**20, flush=True)


def memory_row(length, memory):
    """The memory table's row; a layer without a measurement gets NOT_MEASURABLE."""
    ours, theirs = memory["ours"], memory["keras"]
    if not ours or not theirs:  # None, or nothing allocated: no ratio to show
        cells = [f"{value:.1f}" if value else NOT_MEASURABLE for value in (ours, theirs)]
        return f"| {length} | train | {cells[0]} | {cells[1]} | {NOT_MEASURABLE} |"
    return f"| {length} | train | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument(
        "--tiny",
        action="store_true",
        help=f"lengths {TINY_LENGTHS}, {TINY_REPEATS} repeats: a quick check "
        "that every row prints, not a measurement",
    )
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.tiny:
        args.lengths, args.repeats = list(TINY_LENGTHS), TINY_REPEATS
    elif args.repeats < 10 and args.memory_child is None:
        parser.error(f"--repeats must be at least 10 for stable medians. Received: {args.repeats}")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.memory_child is not None:
        memory_child(args.memory_child)
        return 0
    print(
        f"batch {BATCH}, d_model {D_MODEL}, {NUM_HEADS} heads, TensorFlow {tf.__version__}, "
        f"Keras {keras.__version__}, {os.cpu_count()} CPU cores, median of {args.repeats}"
    )
    print()
    print("| length | mode | ours (ms) | Keras (ms) | ours / Keras |")
    print("|---:|---|---:|---:|---:|")
    for length in args.lengths:
        results = time_length(length, args.repeats)
        for mode in MODES:
            ours, theirs = results[mode]["ours"], results[mode]["keras"]
            print(
                f"| {length} | {mode} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |",
                flush=True,
            )
    if not args.no_memory:
        length = max(args.lengths)
        print()
        print(
            "| length | memory allocated by one training step | ours (MiB) | Keras (MiB) |"
            " ours / Keras |"
        )
        print("|---:|---|---:|---:|---:|")
        print(memory_row(length, peak_memory_mib(length)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
