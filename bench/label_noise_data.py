"""The label-noise bench's data: each dataset's splits, the flipped labels, the CSV files.

bench/bench_label_noise.py trains on these files; what it measures is its own.
"""

import csv
import functools

import numpy as np

NOISE = 0.05  # the share of the training labels flipped
SAMPLE = 5000  # texts of newsgroups_5k


@functools.cache
def base_splits(dataset):
    """The TextSplits of a dataset (newsgroups_5k: carved from 20 Newsgroups), read once
    per bench run: every seed, the planted slice and the cost runs start from them."""
    from data import load_text_splits
    from data.splitting.text_splits import TextSplits

    if dataset != "newsgroups_5k":
        splits = load_text_splits({"name": dataset})
        return splits
    from sklearn.model_selection import train_test_split

    full = load_text_splits({"name": "twenty_newsgroups"})
    texts = np.concatenate([full.train[0], full.validation[0], full.test[0]])
    labels = np.concatenate([full.train[1], full.validation[1], full.test[1]])
    texts, _, labels, _ = train_test_split(
        texts, labels, train_size=SAMPLE, stratify=labels, random_state=0
    )
    train_texts, rest_texts, train_labels, rest_labels = train_test_split(
        texts, labels, test_size=0.2, stratify=labels, random_state=0
    )
    halves = train_test_split(
        rest_texts, rest_labels, test_size=0.5, stratify=rest_labels, random_state=0
    )
    validation, test = (halves[0], halves[2]), (halves[1], halves[3])
    return TextSplits((train_texts, train_labels), validation, test, full.class_names)


def flip(labels, num_classes, seed):
    """(noisy labels, flipped mask): NOISE of the labels changed to another class."""
    rng = np.random.default_rng(1000 + seed)
    flipped = np.zeros(len(labels), bool)
    flipped[rng.choice(len(labels), round(NOISE * len(labels)), replace=False)] = True
    noisy = labels.copy()
    shift = rng.integers(1, num_classes, len(labels))  # never 0: always another class
    noisy[flipped] = (labels[flipped] + shift[flipped]) % num_classes
    return noisy, flipped


def write_csv(path, texts, labels, class_names):
    """A user-style CSV file: a text and a label name per row."""
    with open(path, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["text", "label"])
        writer.writerows((str(text), class_names[label]) for text, label in zip(texts, labels))
