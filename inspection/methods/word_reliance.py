"""The words a model relies on across a dataset, and whether the data made them a shortcut.

Per class c and word w (a word as the model sees it: a word-level model's token, or a
checkpoint's pieces joined, as the viewer shows them; the unknown token is no word):
- the data side (Gardner et al. 2021, "Competency problems"), on the training texts:
  `train_count` (texts containing w), `p_class_given_word`, its `lift` over the class prior
  p0 and the z statistic of that share against p0, z = (p - p0) / sqrt(p0 (1 - p0) / n),
  with its one-sided p-value (w favours c) times the number of (word, class) pairs tested
  (Bonferroni). The words whose corrected p-value is small are c's candidates: a word in
  many training texts is one however rarely the evaluated texts hold it;
- the model side: the insertion of w into held-out texts against random words
  (`inspection.methods.reliance`), and `deletion`, the mean drop of p(c) when every
  occurrence of w is removed (given the padding id, as the faithfulness measures remove
  tokens) from the evaluated texts that contain it;
- attribution: over the evaluated texts that contain w, the mean of w's attribution toward
  c (the sum over its pieces and occurrences), with a 95% bootstrap interval over texts.

Letter legend: E examples, T token ids, C classes, W words.
"""

import dataclasses

import numpy as np
from scipy.stats import norm

from inspection.methods.attribution import attribute
from inspection.methods.forward_passes import class_probabilities
from inspection.token_schemes import token_scheme
from inspection.word_pieces import PADDING_ID

# Texts that a word is inserted into or removed from: at most these.
EDITED_TEXTS = 200
# A candidate word's corrected p-value of Gardner's test at most this.
CANDIDATE_P_VALUE = 0.05
# A control word's uncorrected p-value for every class above this: the data ties it to none.
UNASSOCIATED_P_VALUE = 0.05
# Attribution methods whose scores are linear in the explained logit: the sum of the token
# scores of (logit_a - logit_b) is a's minus b's.
LOGIT_LINEAR_METHODS = ("gradient_x_input", "conservative_gradient_x_input", "integrated_gradients")


@dataclasses.dataclass
class TextWords:
    """One text's words: where each sits (token positions, every occurrence) and the token
    positions before which a word can be inserted (each word's first piece, and the end)."""

    positions: dict
    boundaries: list


def text_words(token_ids, vocabulary):
    """Per row of token ids (E, T), its `TextWords`; and each word's piece ids.

    Example:
    >>> vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "play", "##ed", "well"]
    >>> rows, pieces = text_words(np.array([[2, 4, 5, 6, 4, 5, 3, 0]]), vocabulary)
    >>> rows[0].positions, rows[0].boundaries, pieces["played"]
    ({'played': [1, 2, 4, 5], 'well': [3]}, [1, 3, 4, 6], (4, 5))
    """
    vocabulary = [str(token) for token in vocabulary]
    scheme = token_scheme(vocabulary)
    rows, pieces_of = [], {}
    for ids in np.asarray(token_ids):
        real = np.flatnonzero(ids != PADDING_ID)  # padding sits at the end
        tokens = [vocabulary[token_id] for token_id in ids[real]]
        indices = scheme.word_index(tokens)
        groups = {}  # word number -> token positions
        for position, index in zip(real.tolist(), indices, strict=True):
            if index is not None:
                groups.setdefault(index, []).append(position)
        positions, boundaries = {}, []
        for group in groups.values():
            boundaries.append(group[0])
            word_tokens = [vocabulary[ids[position]] for position in group]
            word = scheme.join(word_tokens)
            if word == scheme.unknown:
                continue
            positions.setdefault(word, []).extend(group)
            # A word is inserted into texts with the pieces it has after a space (RoBERTa's
            # "Ġfilm", not a text's first "film"), where its tokenizer has such pieces.
            kept = pieces_of.get(word)
            if kept is None or (
                scheme.marks_word_start(word_tokens[0])
                and not scheme.marks_word_start(vocabulary[kept[0]])
            ):
                pieces_of[word] = tuple(int(ids[position]) for position in group)
        ends = [position for position, index in zip(real.tolist(), indices) if index is not None]
        boundaries.append(ends[-1] + 1 if ends else (int(real[0]) + 1 if len(real) else 0))
        rows.append(TextWords(positions, boundaries))
    return rows, pieces_of


def class_word_scores(classifier, token_ids, rows, pooling, method, num_classes, batch_size=32):
    """Per class, per text, {word: its attribution toward the class} (C lists of E dicts).

    A softmax's logits move together without changing its probabilities, so a word can
    raise every class's logit: for the methods linear in the explained logit, the
    attribution toward c is that of logit_c minus the mean of the other logits (its
    attribution minus the mean of theirs), which only what separates c counts toward.
    """
    token_ids = np.asarray(token_ids)
    scores = np.stack(
        [
            attribute(
                classifier,
                token_ids,
                method,
                pooling,
                classes=np.full(len(token_ids), label),
                batch_size=batch_size,
            )
            for label in range(num_classes)
        ]
    )  # (C, E, T)
    if method in LOGIT_LINEAR_METHODS and num_classes > 1:
        scores = scores - (scores.sum(axis=0) - scores) / (num_classes - 1)
    return [
        [
            {word: float(row_scores[positions].sum()) for word, positions in row.positions.items()}
            for row_scores, row in zip(class_scores, rows, strict=True)
        ]
        for class_scores in scores
    ]


def word_means(text_scores, min_count):
    """{word: (mean, the per-text values)} of the words in at least `min_count` texts.

    Example:
    >>> word_means([{"a": 1.0, "b": 2.0}, {"a": 3.0}], min_count=2)
    {'a': (2.0, [1.0, 3.0])}
    """
    values = {}
    for scores in text_scores:
        for word, score in scores.items():
            values.setdefault(word, []).append(score)
    return {
        word: (float(np.mean(scores)), scores)
        for word, scores in values.items()
        if len(scores) >= min_count
    }


class LabelAssociation:
    """Gardner et al.'s test of p(class | word) against the class prior, on training texts,
    and the candidate words of each class it gives.

    Args:
        train_rows: the training texts' `TextWords` (or anything with `.positions`).
        train_labels: int (E,).
        min_count: the fewest training texts a tested word is in; the Bonferroni factor
            `tests` is the number of (word, class) pairs tested.

    Example:
    >>> rows = [TextWords({"x": [0]}, [])] * 10 + [TextWords({}, [])] * 10
    >>> association = LabelAssociation(rows, np.array([1] * 10 + [0] * 10), 2, min_count=5)
    >>> entry = association("x", 1)
    >>> entry["p_class_given_word"], entry["lift"], round(entry["z"], 2), entry["p_value"] < 0.01
    (1.0, 2.0, 3.16, True)
    >>> association.candidates(1, limit=5), association.candidates(0, limit=5)
    (['x'], [])
    """

    def __init__(self, train_rows, train_labels, num_classes, min_count):
        train_labels = np.asarray(train_labels, dtype=np.int64)
        self.prior = np.bincount(train_labels, minlength=num_classes) / max(len(train_labels), 1)
        counts = {}  # word -> texts per class (C,)
        for row, label in zip(train_rows, train_labels, strict=True):
            for word in row.positions:
                counts.setdefault(word, np.zeros(num_classes, dtype=np.int64))[label] += 1
        self.counts = counts
        self.tested = [word for word, per_class in counts.items() if per_class.sum() >= min_count]
        self.tests = max(1, len(self.tested) * num_classes)

    def __call__(self, word, label):
        """{"train_count", "p_class_given_word", "lift" (that share over the prior), "z",
        "p_value" (one-sided, times `tests`)}; a word never seen in training has count 0
        and null share, lift and z, p-value 1."""
        per_class = self.counts.get(word)
        total = int(per_class.sum()) if per_class is not None else 0
        prior = self.prior[label]
        if total == 0 or not 0 < prior < 1:
            return {
                "train_count": total,
                "p_class_given_word": None,
                "lift": None,
                "z": None,
                "p_value": 1.0,
            }
        share = per_class[label] / total
        z = (share - prior) / np.sqrt(prior * (1 - prior) / total)
        return {
            "train_count": total,
            "p_class_given_word": float(share),
            "lift": float(share / prior),
            "z": float(z),
            "p_value": float(min(1.0, norm.sf(z) * self.tests)),
        }

    def candidates(self, label, limit, p_value=CANDIDATE_P_VALUE):
        """The tested words that the training data ties to `label` (corrected p-value at
        most `p_value`), most significant first, at most `limit`."""
        found = []
        for word in self.tested:
            entry = self(word, label)
            if entry["p_value"] <= p_value:
                found.append((-entry["z"], word))
        return [word for _, word in sorted(found)[:limit]]

    def unassociated(self, p_value=UNASSOCIATED_P_VALUE):
        """The tested words tied to no class: every class's uncorrected one-sided p-value
        above `p_value` (the control's random words come from these)."""
        spread = np.sqrt(self.prior * (1 - self.prior))
        found = []
        for word in self.tested:
            per_class = self.counts[word]
            total = per_class.sum()
            z = (per_class / total - self.prior) / (spread / np.sqrt(total))
            if np.all(norm.sf(z) > p_value):
                found.append(word)
        return found


def insertion_sites(rows, seed=0):
    """One random word boundary per text (where every word is inserted into it)."""
    rng = np.random.default_rng(seed)
    return np.array([row.boundaries[rng.integers(len(row.boundaries))] for row in rows])


def inserted(token_ids, sites, pieces, cap, keep_last, boundaries=None):
    """The rows (E, T) with `pieces` inserted before each row's site, cut to `cap` tokens
    (a checkpoint's text keeps its closing special token: `keep_last`). A word that the cut would
    remove moves to the last of the row's `boundaries` (`TextWords.boundaries`; None: any
    position) where it fits: the model must see it, and whole.

    Example:
    >>> inserted(np.array([[2, 5, 3, 0]]), [1], (9,), cap=8, keep_last=True).tolist()
    [[2, 9, 5, 3]]
    >>> inserted(np.array([[2, 5, 6, 3]]), [3], (9, 8), cap=4, keep_last=True).tolist()
    [[2, 9, 8, 3]]
    >>> inserted(np.array([[2, 5, 6, 7, 3]]), [4], (9,), cap=4, keep_last=True,
    ...          boundaries=[[1, 3, 4]]).tolist()  # 6 is "##" of 5's word
    [[2, 9, 5, 3]]
    """
    rows = []
    for row, (ids, site) in enumerate(zip(np.asarray(token_ids), sites, strict=True)):
        real = ids[ids != PADDING_ID].tolist()
        last = cap - int(keep_last) - len(pieces)
        if site > last:
            fitting = [
                boundary
                for boundary in (boundaries[row] if boundaries else [last])
                if boundary <= last
            ]
            site = max(fitting, default=0)
        row = real[:site] + list(pieces) + real[site:]
        if len(row) > cap:
            row = row[: cap - 1] + row[-1:] if keep_last else row[:cap]
        rows.append(row)
    width = max(len(row) for row in rows)
    return np.array([row + [PADDING_ID] * (width - len(row)) for row in rows], dtype=np.int64)


def deletion_effects(classifier, token_ids, positions, label, base=None, batch_size=32):
    """Per text, p(label) minus p(label) with the tokens at `positions` (one list per text)
    given the padding id: float64 (E,)."""
    token_ids = np.asarray(token_ids)
    if base is None:
        base = class_probabilities(
            classifier, token_ids, np.full(len(token_ids), label), batch_size
        )
    edited = token_ids.copy()
    for row, row_positions in enumerate(positions):
        edited[row, row_positions] = PADDING_ID
    return base - class_probabilities(classifier, edited, np.full(len(edited), label), batch_size)


def frequency_matched(words, counts, excluded, size, seed=0, bands=5):
    """`size` words drawn at random, not in `excluded`, one from the frequency band (of
    log count, `bands` quantile bands over `words`) of each excluded word in turn.

    Example:
    >>> counts = {"a": 100, "b": 90, "c": 20, "d": 21, "e": 95}
    >>> frequency_matched(list(counts), counts, ["a"], 1, bands=2)[0] in ("b", "e")
    True
    """
    if not words or not excluded:
        return []
    rng = np.random.default_rng(seed)
    logs = np.log([counts[word] for word in words])
    edges = np.quantile(logs, np.linspace(0, 1, bands + 1)[1:-1])
    band = dict(zip(words, np.searchsorted(edges, logs, side="right").tolist(), strict=True))
    pool = [word for word in words if word not in set(excluded)]
    drawn = []
    for target in list(excluded)[:size]:
        candidates = [word for word in pool if band[word] == band[target]] or pool
        if not candidates:
            break
        choice = candidates[rng.integers(len(candidates))]
        drawn.append(choice)
        pool.remove(choice)
    return drawn
