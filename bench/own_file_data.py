"""The own-file bench's user-style CSV files, carved from the built-in datasets.

Three kinds of short texts a user brings, each a `text,label` file (the label a class
name), a stratified sample (`train_test_split(stratify=..., random_state=0)`) of the
pooled train, validation and test splits:
- reviews: Rotten Tomatoes sentences, fresh or rotten;
- news: Reuters R8 articles cut to their first NEWS_WORDS words, a brief per topic (8);
- questions: the first question of each 20 Newsgroups post, labelled by the newsgroup's
  hierarchy (comp, rec, sci, talk, soc, alt, misc; classes under MIN_CLASS_SIZE dropped).
The built-in 20 Newsgroups is Cardoso-Cachopo's lower-cased copy, punctuation and
headers stripped: no "?" or sentence end is left to find. A question starts at the
first question opener (QUESTION_OPENER: "does anyone", "is there a", "how do i", ...)
and ends before the next opener or stop phrase ("thanks", "in article", "i m", ...), at
most QUESTION_WORDS words; shorter than 4 words, it is skipped. The "?" is added.
bench/bench_own_file.py trains on these files; what it measures is its own.
"""

import re

import numpy as np

NEWS_WORDS = 40
QUESTION_WORDS = 25
MIN_CLASS_SIZE = 50  # questions: a hierarchy with fewer is dropped (misc.forsale asks little)
FILES = ("reviews", "news", "questions")
SOURCES = {"reviews": "rotten_tomatoes", "news": "reuters_r8", "questions": "twenty_newsgroups"}

QUESTION_OPENER = re.compile(
    r"\b((does|do|did|can|could|would|will|has|have|is|are) (anyone|anybody|someone|somebody)"
    r"|(anyone|anybody) (know|have)|(is|are) there (a|an|any)"
    r"|(how|where|what|why|when) (do|does|can|should) (i|you|one|we)"
    r"|is it (possible|true)|do you know|why (is|are|does|do|did)|what (is|are) (a|an|the))\b"
)
# Where an unpunctuated question has most likely ended: thanks, a quote, "i" + verb.
QUESTION_STOP = re.compile(
    r"\b(thanks|thank you|please|in article|i (m|ve|am|have|had|was|would|d|need|want|think))\b"
)


def first_question(post):
    """The post's first question (see the module docstring), or None.

    Example:
    >>> first_question("re modems hi all does anyone know a fast modem thanks bob")
    'does anyone know a fast modem?'
    >>> first_question("my modem is fast") is None
    True
    """
    opener = QUESTION_OPENER.search(post)
    if opener is None:
        return None
    rest = post[opener.end() :]
    ends = [
        match.start()
        for match in (QUESTION_OPENER.search(rest), QUESTION_STOP.search(rest))
        if match is not None
    ]
    words = (opener.group(0) + rest[: min(ends, default=len(rest))]).split()[:QUESTION_WORDS]
    return " ".join(words) + "?" if len(words) >= 4 else None


def pooled(dataset, data_dir=None):
    """(texts, class names per text) of every split of a built-in dataset (prepared in the
    TFDS folder `data_dir`; None: TFDS_DATA_DIR or ~/tensorflow_datasets)."""
    from data import load_text_splits

    splits = load_text_splits({"name": dataset, "data_dir": data_dir})
    texts = np.concatenate([splits.train[0], splits.validation[0], splits.test[0]])
    labels = np.concatenate([splits.train[1], splits.validation[1], splits.test[1]])
    return texts, np.asarray(splits.class_names)[labels]


def user_texts(name, data_dir=None):
    """(texts, label names, note) of the file `name` before sampling; the note says what
    was found and dropped."""
    texts, labels = pooled(SOURCES[name], data_dir)
    if name == "reviews":
        return texts, labels, f"{len(texts):,} sentences"
    if name == "news":
        briefs = np.array([" ".join(str(text).split()[:NEWS_WORDS]) for text in texts], object)
        return briefs, labels, f"{len(texts):,} articles cut to {NEWS_WORDS} words"
    questions = [first_question(str(text)) for text in texts]
    found = np.array([question is not None for question in questions])
    texts = np.array(questions, object)[found]
    labels = np.array([label.split(".")[0] for label in labels[found]])
    names, counts = np.unique(labels, return_counts=True)
    small = {name: int(count) for name, count in zip(names, counts) if count < MIN_CLASS_SIZE}
    keep = ~np.isin(labels, list(small))
    dropped = ", ".join(f"{name} ({count})" for name, count in small.items()) or "none"
    return (
        texts[keep],
        labels[keep],
        (
            f"{found.sum():,} questions in {len(found):,} posts; "
            f"classes under {MIN_CLASS_SIZE} dropped: {dropped}"
        ),
    )


def user_file(name, sample, folder, data_dir=None):
    """Writes `folder/name.csv` (unless it already holds the same rows) from the built-in
    dataset in the TFDS folder `data_dir`; its path and statistics: rows, classes, median
    words, what was found (`note`)."""
    import pandas as pd
    from sklearn.model_selection import train_test_split

    texts, labels, note = user_texts(name, data_dir)
    if sample < len(texts):
        texts, _, labels, _ = train_test_split(
            texts, labels, train_size=sample, stratify=labels, random_state=0
        )
        note += f"; {sample:,} sampled"
    else:
        note += f"; all {len(texts):,} kept (fewer than {sample:,})"
    content = pd.DataFrame({"text": texts, "label": labels}).to_csv(index=False)
    path = folder / f"{name}.csv"
    folder.mkdir(parents=True, exist_ok=True)
    # Written once: an unchanged file keeps its date, as a user's does between runs.
    if not path.is_file() or path.read_text() != content:
        path.write_text(content)
    return path, {
        "rows": len(texts),
        "classes": len(set(labels)),
        "median_words": float(np.median([len(text.split()) for text in texts])),
        "note": note,
    }
