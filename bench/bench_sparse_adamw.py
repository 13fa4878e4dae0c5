"""Train-step time of the classifier with `optimizer: sparse_adamw` against Keras' AdamW.

Usage:
    python bench/bench_sparse_adamw.py [--vocabularies 20000 60000] [--lengths 64 256]
        [--repeats 10]

One compiled train step (`train_on_batch`) of the schema's default classifier (d_model 64,
2 heads, feed-forward 128, one block) on a batch of 32 random token ids, with the
schema's training defaults (AdamW, weight decay 0.01, clipnorm 1.0). The two optimizers
run interleaved, 10 steps each in turn (the order reversed every round); the table shows
median milliseconds per step and the ratio sparse / dense measured in the same rounds.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["KERAS_BACKEND"] = "tensorflow"
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from bench_attention import interleaved_medians_ms  # noqa: E402  (bench/ is the script's folder)

from config import ModelConfig, TrainingConfig  # noqa: E402
from engine.training.trainer import build_trainer  # noqa: E402
from models import build_classifier  # noqa: E402

BATCH, NUM_CLASSES, STEPS_PER_TIMING = 32, 8, 10
OPTIMIZERS = ("adamw", "sparse_adamw")


def make_step(optimizer, vocabulary_size, length):
    """A callable running STEPS_PER_TIMING train steps of a fresh classifier and trainer."""
    rng = np.random.default_rng(0)
    token_ids = rng.integers(2, vocabulary_size, size=(BATCH, length))
    labels = keras.utils.to_categorical(rng.integers(0, NUM_CLASSES, BATCH), NUM_CLASSES)
    keras.utils.set_random_seed(0)
    classifier = build_classifier(ModelConfig(), vocabulary_size, length, NUM_CLASSES)
    trainer = build_trainer(classifier, TrainingConfig(optimizer=optimizer), 100)

    def steps():
        for _ in range(STEPS_PER_TIMING):
            trainer.train_on_batch(token_ids, labels)

    return steps


def time_case(vocabulary_size, length, repeats):
    """Median milliseconds per step, {optimizer: ms}."""
    steps = {name: make_step(name, vocabulary_size, length) for name in OPTIMIZERS}
    medians = interleaved_medians_ms(steps, repeats, warmups=1)
    return {name: ms / STEPS_PER_TIMING for name, ms in medians.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocabularies", type=int, nargs="+", default=[20000, 60000])
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    if args.repeats < 5:
        parser.error(f"--repeats must be at least 5 for stable medians. Received: {args.repeats}")
    print(
        f"batch {BATCH}, schema defaults (d_model 64, 2 heads, feed-forward 128), Keras "
        f"{keras.__version__}, {os.cpu_count()} CPU cores, median of {args.repeats}"
    )
    print()
    print("| vocabulary | length | adamw (ms/step) | sparse_adamw (ms/step) | ratio |")
    print("|---:|---:|---:|---:|---:|")
    for vocabulary_size in args.vocabularies:
        for length in args.lengths:
            result = time_case(vocabulary_size, length, args.repeats)
            dense, sparse = result["adamw"], result["sparse_adamw"]
            print(
                f"| {vocabulary_size:,} | {length} | {dense:.1f} | {sparse:.1f} | "
                f"{sparse / dense:.2f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
