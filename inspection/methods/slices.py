"""Where a classifier fails: slices of the evaluated examples that it gets wrong more often
than the rest, found after a correction for looking at many slices.

Candidate slices, each kept when it holds at least `min_count` examples and not all of them:
- word: the texts that contain a word. Words are lowercased `\\w+` runs, whatever the
  model's tokenizer, so two runs' slices compare. Stop words (scikit-learn's English list)
  are skipped, and so is a word whose texts' gold labels are spread like all the texts'
  (`class_specific`): such a word marks no kind of text the data tells apart, and the
  function words it leaves out filled most of the list. Of the rest, the `MAX_WORDS` in
  the most texts;
- length: the texts' word counts in `LENGTH_BANDS` quantile bands (quintiles);
- label: the examples of each gold label (its accuracy is that class's recall);
- pattern: texts with a digit, with a URL, with an all-caps word of two letters or more;
- column: each value of the user's other columns (`dataset.slice_columns`), the
  `MAX_COLUMN_VALUES` most frequent of each.

Per slice: its size, accuracy and exact (Clopper-Pearson) 95% interval of that accuracy,
and the accuracy of the rest, the examples outside it. Its `p_value` is Fisher's exact
test, one-sided, that the slice is right less often than the rest (`slice_p_value`). A
slice is weak when that p-value is at most alpha/m, m the candidate slices (Bonferroni):
at most a chance alpha that any slice whose examples are right as often as the others is
listed. Slices are ranked by `excess_errors`, size x gap (gap: overall accuracy - slice
accuracy): the errors the slice makes beyond those the overall accuracy would give it.

Letter legend: E examples, S slices, W words, C classes.
"""

import collections
import dataclasses
import re

import numpy as np
from scipy.stats import binomtest, chisquare, fisher_exact
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

ALPHA = 0.05  # the family-wise error rate over all candidate slices
LEVEL = 0.95  # of the interval each slice is shown with
SPECIFIC_P = 0.05  # a word is class-specific when its labels' chi-square p is at most this
MAX_WORDS = 200
MAX_COLUMN_VALUES = 50
LENGTH_BANDS = 5
WORD = re.compile(r"\w+")
PATTERNS = {  # name: (regular expression, whether a match must be all capitals)
    "has digits": (re.compile(r"\d"), False),
    "has URL": (re.compile(r"\b(?:https?://|www\.)\S", re.IGNORECASE), False),
    "has all-caps word": (re.compile(r"\b[^\W\d_]{2,}\b"), True),
}


@dataclasses.dataclass
class Slice:
    """A candidate slice: its name ("word: great"), kind and members (bool (E,))."""

    name: str
    kind: str
    members: np.ndarray = dataclasses.field(repr=False)


def candidate_slices(texts, labels, class_names, columns=None, min_count=20):
    """Every candidate slice of the examples (see the module docstring).

    Args:
        texts: the examples' texts (E,). labels: their gold label ids (E,), or label
            sets (E, C) multi-hot: a word is then screened by the texts' sets.
        class_names: the label names, in id order.
        columns: {column name: values (E,)}, the user's other columns, or None.
        min_count: the fewest examples a slice holds.

    Example:
    >>> texts = ["A GOOD film", "bad 2", "see www.x.org", "good good"]
    >>> found = candidate_slices(texts, [1, 0, 0, 1], ["neg", "pos"], min_count=1)
    >>> [(item.name, item.members.nonzero()[0].tolist()) for item in found][:5]
    [('label: neg', [1, 2]), ('label: pos', [0, 3]), ('has digits', [1]), \
('has URL', [2]), ('has all-caps word', [0])]
    """
    texts, labels = [str(text) for text in texts], np.asarray(labels)
    if labels.ndim == 2:  # label sets (E, C): a slice per label; words screened by set
        members = labels.T > 0.5
        labels = np.unique(labels, axis=0, return_inverse=True)[1].reshape(-1)
    else:
        members = labels[None, :] == np.arange(len(class_names))[:, None]
    found = [Slice(f"label: {name}", "label", row) for name, row in zip(class_names, members)]
    found += [
        Slice(name, "pattern", matches(texts, pattern, capitals))
        for name, (pattern, capitals) in PATTERNS.items()
    ]
    words = [WORD.findall(text.lower()) for text in texts]
    found += length_slices(np.array([len(row) for row in words]))
    for column, values in (columns or {}).items():
        found += value_slices(f"column {column} = ", "column", values, min_count, MAX_COLUMN_VALUES)
    found += word_slices(words, labels, min_count)
    return [item for item in found if min_count <= item.members.sum() < len(texts)]


def matches(texts, pattern, capitals=False):
    """Whether each text (E,) holds a match of `pattern`; with `capitals`, one in capitals.

    Example:
    >>> matches(["NOT good", "I liked it"], PATTERNS["has all-caps word"][0], True).tolist()
    [True, False]
    """
    if capitals:
        return np.array(
            [any(word.isupper() for word in pattern.findall(text)) for text in texts], dtype=bool
        )
    return np.array([pattern.search(text) is not None for text in texts], dtype=bool)


def length_slices(counts, bands=LENGTH_BANDS):
    """The word counts (E,) in quantile bands, named by the counts each band holds.

    Example:
    >>> [item.name for item in length_slices(np.arange(1, 11), bands=2)]
    ['length: 1-5 words', 'length: 6-10 words']
    """
    counts = np.asarray(counts)
    if not len(counts):
        return []
    uppers = np.unique(np.floor(np.quantile(counts, np.arange(1, bands) / bands)))
    band = np.searchsorted(uppers, counts, side="left")  # a count equal to an edge: below
    found = []
    for index in np.unique(band):
        members = band == index
        low, high = counts[members].min(), counts[members].max()
        found.append(
            Slice(
                f"length: {low}-{high} words" if low < high else f"length: {low} words",
                "length",
                members,
            )
        )
    return found


def value_slices(prefix, kind, values, min_count, most):
    """A slice per value of `values` (E,) held by at least `min_count` examples, the `most`
    most frequent (ties by value).

    Example:
    >>> [item.name for item in value_slices("column genre = ", "column",
    ...                                     ["drama", "comedy", "drama"], 2, 10)]
    ['column genre = drama']
    """
    counts = collections.Counter(str(value) for value in values)
    kept = sorted(
        (value for value, count in counts.items() if count >= min_count),
        key=lambda value: (-counts[value], value),
    )[:most]
    values = np.asarray([str(value) for value in values], dtype=object)
    return [Slice(f"{prefix}{value}", kind, values == value) for value in kept]


def word_slices(words, labels, min_count, most=MAX_WORDS):
    """A slice per word in at least `min_count` of the texts' word lists, neither a stop word
    nor spread over the labels like all the texts (`class_specific`); the `most` words in
    the most texts (ties by word).

    Example:
    >>> words = [["good", "the", "film"], ["good", "the"], ["bad", "the", "film"], ["bad"]]
    >>> found = word_slices(words * 5, [1, 1, 0, 0] * 5, min_count=2)
    >>> [(item.name, item.members[:4].tolist()) for item in found]  # not "the", "film"
    [('word: bad', [False, False, True, True]), ('word: good', [True, True, False, False])]
    """
    counts = collections.Counter(
        word for row in words for word in set(row) if word not in ENGLISH_STOP_WORDS
    )
    frequent = sorted(
        (word for word, count in counts.items() if count >= min_count),
        key=lambda word: (-counts[word], word),
    )
    index = {word: position for position, word in enumerate(frequent)}
    members = np.zeros((len(frequent), len(words)), dtype=bool)  # (W, E)
    for row, text_words in enumerate(words):
        for word in set(text_words) & index.keys():
            members[index[word], row] = True
    specific = class_specific(members, labels)
    kept = [word for word, keep in zip(frequent, specific) if keep][:most]
    return [Slice(f"word: {word}", "word", members[index[word]]) for word in kept]


def class_specific(members, labels, p_value=SPECIFIC_P):
    """Whether each slice's gold labels (members: bool (W, E)) differ from all the texts':
    Pearson's chi-square test of the slice's label counts against its size times the
    share of each label among all texts gives p at most `p_value`. A screen before the
    accuracy test, uncorrected; with few texts per label it errs towards keeping a word.

    Example:
    >>> labels = np.array([0, 1] * 50)
    >>> spread, one_sided = np.arange(100) < 40, labels == 1
    >>> class_specific(np.array([spread, one_sided]), labels).tolist()
    [False, True]
    """
    labels = np.asarray(labels)
    present = np.unique(labels)
    if len(members) == 0 or len(present) < 2:  # one label: no word can differ from it
        return np.zeros(len(members), dtype=bool)
    one_hot = labels[:, None] == present[None, :]  # (E, C)
    observed = members.astype(np.int64) @ one_hot  # (W, C)
    expected = observed.sum(axis=1, keepdims=True) * one_hot.mean(axis=0)  # (W, C)
    return chisquare(observed, expected, axis=1).pvalue <= p_value


def slice_p_value(size, right, examples, examples_right):
    """Fisher's exact test, one-sided, that a slice of `size` examples, `right` of them
    right, is right less often than the rest of the `examples` (`examples_right` right).

    Fisher's test conditions on both margins: given the slice's size and how many examples
    are right in all, the slice's right ones are hypergeometric when being right does not
    depend on being in the slice. So no accuracy is taken as known: a test at the overall
    accuracy counts the slice on both sides, and a binomial at the rest's ignores that the
    rest's accuracy is itself measured, which matters when the rest is small.

    Example:
    >>> round(slice_p_value(10, 7, 110, 87), 3)  # 7 of 10 against 80 of 100: chance
    0.348
    >>> slice_p_value(200, 100, 1200, 1000) < 1e-30  # 0.5 of 200 against 0.9 of 1000
    True
    """
    rest, rest_right = examples - size, examples_right - right
    table = [[right, size - right], [rest_right, rest - rest_right]]  # rows: slice, rest
    return float(fisher_exact(table, alternative="less").pvalue)


def measure_slices(slices, correct, alpha=ALPHA):
    """Each slice's accuracy, interval and test against the rest; the weak ones.

    Args:
        slices: `Slice`s of the examples, each holding some of them and not all.
        correct: whether each example (E,) was right.

    Returns:
        {"examples", "accuracy", "correction" (a sentence), "alpha", "weak_slices",
        "slices"}: each slice {"slice", "kind", "size", "accuracy", "accuracy_ci" (LEVEL,
        Clopper-Pearson), "rest_accuracy", "gap", "excess_errors", "p_value" (Fisher's,
        uncorrected), "weak" (p_value at most alpha/m)}; the weak ones and all of them by
        excess errors, most first.

    Raises:
        ValueError: a slice holds no example, every example, or is of other examples.

    Example:
    >>> correct = np.arange(100) >= 30  # the first 30 wrong
    >>> found = [Slice("first", "pattern", np.arange(100) < 40),
    ...          Slice("last", "pattern", np.arange(100) >= 60)]
    >>> report = measure_slices(found, correct)
    >>> [(entry["slice"], entry["accuracy"], entry["weak"]) for entry in report["slices"]]
    [('first', 0.25, True), ('last', 1.0, False)]
    """
    correct = np.asarray(correct, dtype=bool)
    examples, right = len(correct), int(correct.sum())
    check_slices(slices, examples)
    members = np.array([item.members for item in slices], dtype=bool).reshape(-1, examples)
    sizes, rights = members.sum(axis=1), (members & correct).sum(axis=1)  # (S,)
    threshold, overall, entries = alpha / max(1, len(slices)), right / examples, []
    for item, size, slice_right in zip(slices, sizes.tolist(), rights.tolist()):
        interval = binomtest(slice_right, size).proportion_ci(LEVEL, method="exact")
        p_value = slice_p_value(size, slice_right, examples, right)
        entries.append(
            {
                "slice": item.name,
                "kind": item.kind,
                "size": size,
                "accuracy": slice_right / size,
                "accuracy_ci": [float(interval.low), float(interval.high)],
                "rest_accuracy": (right - slice_right) / (examples - size),
                "gap": overall - slice_right / size,
                "excess_errors": size * overall - slice_right,
                "p_value": p_value,
                "weak": p_value <= threshold,
            }
        )
    entries.sort(key=lambda entry: (-entry["excess_errors"], entry["slice"]))
    return {
        "examples": examples,
        "metric": "accuracy",
        "accuracy": overall,
        "correction": correction_sentence(len(slices), alpha),
        "alpha": alpha,
        "weak_slices": [entry for entry in entries if entry["weak"]],
        "slices": entries,
    }


def check_slices(slices, examples):
    """A ValueError unless each slice holds some of the `examples` and not all."""
    for item in slices:
        size = np.count_nonzero(item.members)
        if np.shape(item.members) != (examples,) or not 0 < size < examples:
            raise ValueError(
                f"a slice holds some of the {examples} examples and not all. Received: slice "
                f"{item.name!r} of {size} of {np.size(item.members)} examples"
            )


def correction_sentence(
    tests, alpha=ALPHA, test="Fisher's exact test", what="it is right less often"
):
    """How weak slices were told apart, in words.

    Example:
    >>> correction_sentence(50)  # doctest: +ELLIPSIS
    "Bonferroni over 50 candidate slices: a slice is weak when Fisher's exact test ...0.001."
    """
    return (
        f"Bonferroni over {tests} candidate slices: a slice is weak when {test} "
        f"that {what} than the rest (one-sided) gives a p_value at most "
        f"{alpha}/{tests} = {alpha / max(1, tests):.3g}."
    )
