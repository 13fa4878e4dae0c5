"""Training time per epoch: batches padded to the cap vs to their longest text, and XLA.

Usage:
    python bench/bench_padding.py                          # configs/default.yaml
    python bench/bench_padding.py --set text.sequence_length=256   # the schema's old default
    python bench/bench_padding.py --xla                            # + XLA on the buckets

Trains the same recipe, in one process, three ways: every batch padded to
`text.sequence_length` (what training did before length bucketing), batches padded to
their longest text with length buckets (what train.py does now), and with `--xla` the
latter with `jit_compile=True`. Each run uses the recipe's seed, epoch budget and early
stopping on validation; the table gives the median epoch time (the first epoch, which traces and
compiles, apart), the share of real tokens in the training batches, and validation and
test accuracy of the restored best epoch.
"""

import argparse
import dataclasses
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import keras  # noqa: E402
import pandas as pd  # noqa: E402
import tensorflow as tf  # noqa: E402

import train  # noqa: E402
from config.files import load_config  # noqa: E402
from engine.training import fitting  # noqa: E402


class EpochTimer(keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.start)


def padded_to_cap(data, split, batch_size):
    """The pipeline before length bucketing: every text padded to the cap."""
    texts, labels = getattr(data.splits, split)
    num_classes = len(data.class_names)
    dataset = tf.data.Dataset.from_tensor_slices((np.asarray(texts, dtype=object), labels))
    dataset = dataset.batch(1024).map(lambda text, label: (data.vectorizer(text), label))
    dataset = dataset.unbatch().cache()
    if split == "train":
        dataset = dataset.shuffle(len(labels), seed=0, reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size).map(
        lambda ids, label: (ids, tf.one_hot(label, num_classes))
    )
    # The number of batches sets the learning-rate schedule's length, as in train.py.
    batches = tf.data.experimental.assert_cardinality(math.ceil(len(labels) / batch_size))
    return dataset.apply(batches).prefetch(tf.data.AUTOTUNE)


def real_token_share(dataset):
    real = padded = 0
    for token_ids, _ in dataset.as_numpy_iterator():
        real += int((token_ids != 0).sum())
        padded += token_ids.size
    return real / padded


def train_once(config, data, pipelines, jit_compile):
    training = dataclasses.replace(
        config.training.resolved(bool(config.model.pretrained)), jit_compile=jit_compile
    )
    config = dataclasses.replace(config, training=training)
    keras.utils.set_random_seed(training.seed)
    steps = int(pipelines["train"].cardinality())
    classifier, trainer = train.build_model(config, data, tf.distribute.get_strategy(), steps)
    timer = EpochTimer()
    trainer.fit(
        pipelines["train"],
        validation_data=pipelines["validation"],
        epochs=training.epochs,
        callbacks=[
            timer,
            keras.callbacks.EarlyStopping(
                monitor=training.monitor,
                mode=fitting.monitor_mode(training),
                patience=training.early_stopping_patience,
                restore_best_weights=True,
            ),
        ],
        verbose=0,
        shuffle=False,
    )
    row = {
        "first epoch s": timer.seconds[0],
        "median epoch s": statistics.median(timer.seconds[1:] or timer.seconds),
        "epochs": len(timer.seconds),
    }
    scores = fitting.score_splits(classifier, pipelines, data.class_names)
    for split, metrics in scores.items():
        row[f"{split} acc"] = metrics["accuracy"] * 100
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench_padding.py", description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "default.yaml"))
    parser.add_argument(
        "--set",
        dest="overrides",
        nargs="+",
        default=[],
        metavar="SECTION.FIELD=VALUE",
        help="config overrides, as train.py's",
    )
    parser.add_argument(
        "--xla", action="store_true", help="also train the bucketed batches with jit_compile=True"
    )
    args = parser.parse_args(argv)
    config = load_config(args.config, args.overrides)
    if config.training.steps_per_epoch is not None:
        # train.load_data makes a capped epoch's train pipeline endless.
        parser.error(
            "the bench times whole epochs: add --set training.steps_per_epoch=null. "
            f"Received: training.steps_per_epoch={config.training.steps_per_epoch}"
        )
    keras.utils.set_random_seed(config.training.seed)
    data, bucketed, _ = train.load_data(config)
    fixed = {
        split: padded_to_cap(data, split, config.training.batch_size)
        for split in ("train", "validation", "test")
    }
    rows = []
    runs = [("padded to the cap", fixed, False), ("padded per batch, bucketed", bucketed, False)]
    if args.xla:
        runs.append(("padded per batch, bucketed, XLA", bucketed, True))
    for name, pipelines, jit in runs:
        row = {"batches": name, "real tokens %": 100 * real_token_share(pipelines["train"])}
        row.update(train_once(config, data, pipelines, jit))
        rows.append(row)
        print(f"{name}: done", flush=True)
    table = pd.DataFrame(rows)
    table["speed-up"] = table["median epoch s"].iloc[0] / table["median epoch s"]
    print(
        f"\n{Path(args.config).name}, batch {config.training.batch_size}, cap "
        f"{config.text.sequence_length}, {os.cpu_count()} CPU cores\n"
    )
    print(table.to_string(index=False, float_format="{:.2f}".format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
