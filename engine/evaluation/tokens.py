"""The words a run relies on across a split, for `evaluate.py --tokens`.

Per class, the candidates are the words that the training data ties to it (Gardner's test,
`word_reliance.LabelAssociation`: a word of many training texts is one however rarely the
evaluated split holds it); each is inserted into the same evaluated texts, against random
words the data ties to no class (`inspection.methods.reliance`), and the class's words are
ranked by their reliance: the rise of p(class) the word's identity causes, toward this
class and away from the others. A word in every class's texts is no candidate, and one the
model treats alike for every class scores near zero.

Writes, next to the split's evaluation reports (`RUN_DIR/eval/<split>/`):
    tokens.json  {"split", "examples", "method", "min_count", "tests", "inserted_into",
                 "control_words", "classes": {LABEL: [{"word", "count", "train_count",
                 "p_class_given_word", "lift", "z", "p_value", "insertion", "insertion_ci",
                 "control", "net", "net_ci", "reliance", "reliance_ci", "attribution",
                 "attribution_ci", "deletion", "deletion_ci", "shortcut"}, ...]},
                 "faithfulness": {...}}
    tokens.md    per class, the top words and their numbers
    tokens.png   per class, the top words' reliance and insertion with their intervals
docs/dataset_inspection.md says what each number means; `tokens_report` renders them.
"""

from itertools import chain, zip_longest

import numpy as np

from engine.evaluation.faithfulness import tokenize
from inspection.attention_tokens import shortest_first
from inspection.methods.attribution import DEFAULT_METHOD
from inspection.methods.bootstrap import mean_interval
from inspection.methods.forward_passes import probabilities
from inspection.methods.reliance import ClassReliance, insertion_changes
from inspection.methods.word_reliance import (
    EDITED_TEXTS,
    LabelAssociation,
    class_word_scores,
    deletion_effects,
    frequency_matched,
    insertion_sites,
    text_words,
    word_means,
)
from inspection.token_schemes import token_scheme

TOP_WORDS = 40  # candidates per class, each inserted into the evaluated texts
CONTROL_WORDS = 10  # random words whose mean insertion is the control
CHECKED_WORDS = 10  # the top words whose insertion is checked against the control's
# A shortcut: the training data ties the word to the class (corrected p-value) so strongly
# that it nearly decides it (p(class | word) goes at least this share of the way from the
# prior to 1: 0.9 for two balanced classes; a task's own signal words, "bad" at 0.83 or
# "love" at 0.78 in Rotten Tomatoes, stay under it), and the model relies on it (inserting
# it raises p(class) by this much more than random words do, its reliance interval above 0).
SHORTCUT_P_VALUE = 0.01
SHORTCUT_SHARE = 0.8
SHORTCUT_NET = 0.05
# Forward passes only: larger batches than the attribution's backward passes.
EDIT_BATCH_SIZE = 128


def measure_run_tokens(
    run, texts, labels, limit, split, method=DEFAULT_METHOD, min_count=20, seed=0, batch_size=32
):
    """The tokens report (see the module docstring) of the first `limit` examples;
    `min_count`: the fewest training texts a candidate word is in."""
    vectorizer, classifier = run.parts
    vocabulary = vectorizer.get_vocabulary()
    texts, labels = list(texts[:limit]), np.asarray(labels[:limit], dtype=np.int64)
    token_ids = tokenize(run, texts)
    rows, _ = text_words(token_ids, vocabulary)
    num_classes = len(run.class_names)
    train_texts, train_labels = run.load_split("train")
    train_rows, pieces = text_words(tokenize(run, train_texts), vocabulary)
    association = LabelAssociation(train_rows, train_labels, num_classes, min_count)
    candidates = [association.candidates(label, TOP_WORDS) for label in range(num_classes)]
    inserting = _Insertion(run, token_ids, rows, labels, pieces, seed)
    control_words = _control_words(association, candidates, seed)
    control = inserting.control(control_words)
    changes = {word: inserting(word) for word in sorted(set().union(*candidates))}
    attributions = class_word_scores(
        classifier, token_ids, rows, run.pooling, method, num_classes, batch_size
    )
    full = probabilities(classifier, token_ids, EDIT_BATCH_SIZE)  # (E, C)
    classes, checks = {}, {}
    for label, name in enumerate(run.class_names):
        means = word_means(attributions[label], 1)
        entries = []
        for word in candidates[label]:
            summary = inserting.measure(changes[word], control)
            deleted = _word_deletion(classifier, token_ids, rows, word, label, full)
            entry = _word_entry(word, label, association, summary, means.get(word), deleted)
            entries.append({**entry, "count": sum(word in row.positions for row in rows)})
        entries.sort(key=lambda entry: -entry["reliance"])
        classes[name] = entries
        top = [entry["word"] for entry in entries[:CHECKED_WORDS]]
        others = inserting.labels != label
        if top and others.any():
            checks[name] = (
                np.mean([changes[word][others, label] for word in top], axis=0),
                control[others, label],
            )
    return {
        "split": split,
        "examples": len(texts),
        "method": method,
        "min_count": min_count,
        "tests": association.tests,
        "inserted_into": len(inserting.labels),
        "control_words": control_words,
        "classes": classes,
        "faithfulness": _ranking_check(checks),
    }


class _Insertion:
    """Inserts words into a seeded sample of at most `EDITED_TEXTS` evaluated texts."""

    def __init__(self, run, token_ids, rows, labels, pieces, seed):
        vectorizer, self.classifier = run.parts
        rng = np.random.default_rng(seed)
        sample = np.sort(rng.permutation(len(token_ids))[:EDITED_TEXTS])
        self.token_ids, self.labels, self.pieces = token_ids[sample], labels[sample], pieces
        self.sites = insertion_sites(rows, seed)[sample]
        self.boundaries = [rows[index].boundaries for index in sample]
        self.base = probabilities(self.classifier, self.token_ids, EDIT_BATCH_SIZE)
        # The vectorizer's cap (the run's text.sequence_length), not the checkpoint's positions.
        length, cap = run.config.text.sequence_length, self.classifier.encoder.sequence_length
        self.cap = min(cap, length) if isinstance(length, int) else cap
        self.keep_last = bool(token_scheme(vectorizer.get_vocabulary()).specials)
        self.measure = ClassReliance(self.labels, len(run.class_names), seed=seed)

    def __call__(self, word):
        """Every class's probability change per text when `word` is inserted: (N, C)."""
        return insertion_changes(
            self.classifier,
            self.token_ids,
            self.sites,
            self.pieces[word],
            self.cap,
            self.keep_last,
            self.base,
            EDIT_BATCH_SIZE,
            self.boundaries,
        )

    def control(self, words):
        """The mean change of the control's words (zeros without any)."""
        if not words:
            return np.zeros_like(self.base)
        return np.mean([self(word) for word in words], axis=0)


def _control_words(association, candidates, seed):
    """Random words the data ties to no class, frequency-matched to the first candidates."""
    interleaved = chain.from_iterable(zip_longest(*candidates))  # each class's first, ...
    targets = list(dict.fromkeys(word for word in interleaved if word is not None))
    targets = targets[:CONTROL_WORDS]
    pool = association.unassociated()
    counts = {word: int(association.counts[word].sum()) for word in pool + targets}
    return frequency_matched(pool + targets, counts, targets, CONTROL_WORDS, seed)


def _word_deletion(classifier, token_ids, rows, word, label, full):
    """The deletion effects of `word` on `label` in the evaluated texts holding it (at most
    `EDITED_TEXTS`), shortest first."""
    containing = shortest_first(
        token_ids,
        [index for index, row in enumerate(rows) if word in row.positions][:EDITED_TEXTS],
    )
    return deletion_effects(
        classifier,
        token_ids[containing],
        [rows[index].positions[word] for index in containing],
        label,
        full[containing, label],
        EDIT_BATCH_SIZE,
    )


def _word_entry(word, label, association, summary, attribution, deletion):
    """One word's numbers toward `label`: the data's, the insertion's and the attribution's
    and deletion's where the evaluated texts hold the word (else null)."""
    data = association(word, label)
    entry = {"word": word, "count": None, **data}
    for name in ("insertion", "control", "net", "reliance"):
        entry[name] = float(summary[name][label])
        entry[f"{name}_ci"] = summary[f"{name}_ci"][label].tolist()
    del entry["control_ci"]
    entry["attribution"], entry["attribution_ci"] = (
        mean_interval(attribution[1]) if attribution else (None, None)
    )
    entry["deletion"], entry["deletion_ci"] = (
        mean_interval(deletion) if len(deletion) else (None, None)
    )
    prior = association.prior[label]
    share = data["p_class_given_word"]
    entry["shortcut"] = bool(
        data["p_value"] < SHORTCUT_P_VALUE
        and share is not None
        and share >= prior + SHORTCUT_SHARE * (1 - prior)
        and entry["net"] >= SHORTCUT_NET
        and entry["reliance_ci"][0] > 0
    )
    return entry


def _ranking_check(checks):
    """The top words' mean insertion effect against the control words', per class and over
    all classes, with the interval of the (per text, paired) difference."""

    def summary(top, drawn):
        difference, difference_ci = mean_interval(top - drawn)
        random = float(drawn.mean())
        return {
            "top_words": float(top.mean()),
            "random_words": random,
            "ratio": float(top.mean() / random) if random > 0 else None,
            "difference": difference,
            "difference_ci": difference_ci,
            "texts": len(top),
        }

    if not checks:
        return None
    pooled = [np.concatenate(series) for series in zip(*checks.values(), strict=True)]
    return {
        "words": CHECKED_WORDS,
        **summary(*pooled),
        "classes": {name: summary(*pair) for name, pair in checks.items()},
    }
