"""Where a classifier fails: slices of the evaluated examples that it gets wrong more often
than the whole, found after a correction for looking at many slices.

Candidate slices, each kept when it holds at least `min_count` examples and not all of them:
- word: the texts that contain a word, for the `MAX_WORDS` words in the most texts. Words
  are lowercased `\\w+` runs, whatever the model's tokenizer, so two runs' slices compare;
  no stop word is dropped: a model may fail where "not" or "but" is;
- length: the texts' word counts in `LENGTH_BANDS` quantile bands (quintiles);
- label: the examples of each gold label (its accuracy is that class's recall);
- pattern: texts with a digit, with a URL, with an all-caps word of two letters or more;
- column: each value of the user's other columns (`dataset.slice_columns`), the
  `MAX_COLUMN_VALUES` most frequent of each.

Per slice: its size, accuracy, and percentile bootstrap interval of that accuracy. The
bootstrap distribution of the mean of n 0/1 values of which k are 1 is Binomial(n, k/n) / n
(a resample draws n examples with replacement, each right with chance k/n), so its
percentiles are read off exactly (`bootstrap.accuracy_interval`) where resampling would estimate
them: 1000 resamples cannot reach the corrected level's tails (0.05/m of them is less than
one resample when m > 50).

A slice is weak when its interval at the Bonferroni level 1 - alpha/m (m candidate slices)
lies wholly below the overall accuracy: its `p_value` (twice the bootstrap share of
resampled accuracies at or above the overall one) is at most alpha/m. Slices are ranked by
`excess_errors`, size x gap (gap: overall accuracy - slice accuracy): the errors the slice
makes beyond those the overall accuracy would give it.

Letter legend: E examples, S slices.
"""

import collections
import dataclasses
import re

import numpy as np
from scipy.stats import binom

from inspection.methods.bootstrap import accuracy_interval

ALPHA = 0.05  # the family-wise error rate over all candidate slices
LEVEL = 0.95  # of the interval each slice is shown with
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
        texts: the examples' texts (E,). labels: their gold label ids (E,).
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
    texts = [str(text) for text in texts]
    found = [
        Slice(f"label: {name}", "label", np.asarray(labels) == label)
        for label, name in enumerate(class_names)
    ]
    found += [
        Slice(name, "pattern", matches(texts, pattern, capitals))
        for name, (pattern, capitals) in PATTERNS.items()
    ]
    words = [WORD.findall(text.lower()) for text in texts]
    found += length_slices(np.array([len(row) for row in words]))
    for column, values in (columns or {}).items():
        found += value_slices(f"column {column} = ", "column", values, min_count, MAX_COLUMN_VALUES)
    found += word_slices(words, min_count)
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


def word_slices(words, min_count, most=MAX_WORDS):
    """A slice per word in at least `min_count` of the texts' word lists, the `most` words in
    the most texts (ties by word).

    Example:
    >>> [(item.name, item.members.tolist()) for item in word_slices(
    ...     [["good", "good"], ["bad"], ["good", "film"]], min_count=2)]
    [('word: good', [True, False, True])]
    """
    counts = collections.Counter(word for row in words for word in set(row))
    kept = sorted(
        (word for word, count in counts.items() if count >= min_count),
        key=lambda word: (-counts[word], word),
    )[:most]
    index = {word: position for position, word in enumerate(kept)}
    members = np.zeros((len(kept), len(words)), dtype=bool)  # (S, E)
    for row, text_words in enumerate(words):
        for word in set(text_words) & index.keys():
            members[index[word], row] = True
    return [Slice(f"word: {word}", "word", members[index[word]]) for word in kept]


def measure_slices(slices, correct, alpha=ALPHA):
    """Each slice's accuracy, interval and test against the overall accuracy; the weak ones.

    Args:
        slices: `Slice`s of the examples. correct: whether each example (E,) was right.

    Returns:
        {"examples", "accuracy", "correction" (a sentence), "alpha", "weak_slices",
        "slices"}: each slice {"slice", "kind", "size", "accuracy", "accuracy_ci" (LEVEL),
        "corrected_ci" (1 - alpha/m), "gap", "excess_errors", "p_value", "weak"}; the weak
        ones and all of them by excess errors, most first.

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
    members = np.array([item.members for item in slices], dtype=bool).reshape(-1, examples)
    sizes, rights = members.sum(axis=1), (members & correct).sum(axis=1)  # (S,)
    tests = len(slices)
    shown = accuracy_interval(sizes, rights, LEVEL)
    corrected = accuracy_interval(sizes, rights, 1.0 - alpha / max(1, tests))
    # In counts, exactly: a resample is at or above the overall accuracy right / examples
    # when it holds at least `least` right examples.
    least = -(-right * sizes // examples)
    p_values = np.minimum(1.0, 2 * binom.sf(least - 1, sizes, rights / sizes))
    # Below the overall accuracy, in counts: upper / size < right / examples.
    weak = np.rint(corrected[:, 1] * sizes) * examples < right * sizes
    overall = right / examples
    entries = [
        {
            "slice": item.name,
            "kind": item.kind,
            "size": int(size),
            "accuracy": float(rights[index] / size),
            "accuracy_ci": shown[index].tolist(),
            "corrected_ci": corrected[index].tolist(),
            "gap": overall - float(rights[index] / size),
            "excess_errors": float(size * overall - rights[index]),
            "p_value": float(p_values[index]),
            "weak": bool(weak[index]),
        }
        for index, (item, size) in enumerate(zip(slices, sizes))
    ]
    entries.sort(key=lambda entry: (-entry["excess_errors"], entry["slice"]))
    return {
        "examples": examples,
        "accuracy": overall,
        "correction": correction_sentence(tests, alpha),
        "alpha": alpha,
        "weak_slices": [entry for entry in entries if entry["weak"]],
        "slices": entries,
    }


def correction_sentence(tests, alpha=ALPHA):
    """How weak slices were told apart, in words.

    Example:
    >>> correction_sentence(50)  # doctest: +ELLIPSIS
    'Bonferroni over 50 candidate slices: a slice is weak when its bootstrap interval at ...'
    """
    return (
        f"Bonferroni over {tests} candidate slices: a slice is weak when its bootstrap "
        f"interval at level 1 - {alpha}/{tests} (corrected_ci) lies below the overall "
        f"accuracy, i.e. its p_value is at most {alpha / max(1, tests):.3g}."
    )
