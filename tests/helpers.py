"""What the tests share, in one place: the tiny config, its command lines, the metrics of
a run and the interrupts of the resume tests. Test modules import from here and from
`conftest.py`'s session fixtures, never from one another."""

import json
from pathlib import Path

import keras
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# The one config every training test starts from: two epochs of a 1-block, 32-wide model.
TINY = str(ROOT / "configs" / "tiny.yaml")


def tiny_args(root, data_file, *overrides):
    """train.py's arguments for configs/tiny.yaml on `data_file`, written under `root`."""
    return [
        "--config",
        TINY,
        "--set",
        "dataset.name=null",
        f"dataset.train_file={data_file}",
        f"output.root={root}",
        *overrides,
    ]


def shared_tiny_run_args(root, data_file, *overrides):
    """The command of the session's shared run (`conftest.tiny_run_dir`): `tiny_args` that
    also log 2 validation examples' attention images and choose the cap from the data."""
    return tiny_args(
        root, data_file, "training.attention_images=2", "text.sequence_length=auto", *overrides
    )


def pretrained_args(root, data_file, checkpoint, *overrides):
    """`tiny_args` fine-tuning the checkpoint folder `checkpoint`."""
    return tiny_args(root, data_file, f"model.pretrained={checkpoint}", *overrides)


def metrics_of(run_dir):
    """A run's metrics.json without its wall time (the one entry that differs between two
    runs of one command)."""
    metrics = json.loads((Path(run_dir) / "metrics.json").read_text())
    metrics.pop("wall_time_s")
    return metrics


class InterruptAfterEpoch(keras.callbacks.Callback):
    """A Ctrl-C when epoch `epoch` (0-based) ends, after the callbacks before it (the
    backup for a resume among them) have run."""

    def __init__(self, epoch=0):
        super().__init__()
        self.epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if epoch == self.epoch:
            raise KeyboardInterrupt


def read_images(log_dir):
    """{(tag, step): decoded image (height, width, channels)} of the event files in log_dir."""
    images = {}
    import tensorflow as tf

    for event_file in sorted(log_dir.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(event_file)):
            for value in event.summary.value:
                assert value.metadata.plugin_data.plugin_name == "images"
                # The image plugin's layout: [width, height, PNG bytes] per image.
                width, height, png = tf.make_ndarray(value.tensor)
                image = tf.io.decode_png(png).numpy()
                assert image.shape[:2] == (int(height), int(width))
                images[(value.tag, event.step)] = image
    return images


# The viewer tests' records: their labels, tokens that try to break out of the page, and
# peaked attention maps.
CLASS_NAMES = ["negative", "positive"]
HOSTILE_TOKENS = [
    "<script>alert(1)</script>",
    '"onmouseover=alert(1)',
    '</script><img src=x onerror="window.pwned=1">',
    "&amp;<!--",
]


def peaked_scores(num_layers, num_heads, num_tokens, seed):
    logits = np.random.default_rng(seed).normal(
        0, 3, (num_layers, num_heads, num_tokens, num_tokens)
    )
    scores = np.exp(logits)
    return (scores / scores.sum(axis=-1, keepdims=True)).astype("float32")


def make_records():
    """Four viewer records (one with hostile tokens, one empty) of 2 layers x 3 heads."""
    from inspection.attention_file.record import AttentionRecord

    token_lists = [
        ["the", "film", "was", "not", "good"],
        ["i"] + HOSTILE_TOKENS + ["loved", "it"],
        ["great", "story"],
        [],  # an empty text
    ]
    records = []
    for index, tokens in enumerate(token_lists):
        records.append(
            AttentionRecord(
                example_id=f"{index:05d}",
                text=" ".join(tokens),
                tokens=tokens,
                attention_scores=peaked_scores(2, 3, len(tokens), seed=index),
                probabilities=np.array([0.8, 0.2] if index == 0 else [0.1, 0.9], "float32"),
                predicted_label_index=0 if index == 0 else 1,
                true_label_index=index % 2,
            )
        )
    return records


# A bench's train.py overrides that train in seconds, from scratch (model.pretrained=null
# keeps it off any checkpoint).
TINY_RECIPE = [
    "model.pretrained=null",
    "model.d_model=16",
    "model.num_heads=2",
    "model.intermediate_dim=32",
    "text.vocabulary_size=2000",
    "text.sequence_length=32",
    "training.epochs=1",
    "training.steps_per_epoch=4",
    "training.batch_size=16",
]
