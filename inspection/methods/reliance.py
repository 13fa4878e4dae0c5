"""How much a class relies on a word, measured on the model by inserting the word into
held-out texts, against a paired control of random words (Bastings et al. 2022's check of
a planted shortcut, made a ranking).

A word w is inserted at one random word boundary of each of N evaluated texts (the same
boundary for every word: the effects are paired), and the change of every class's
probability is kept: `changes[n, c] = p(c | text n with w) - p(c | text n)`. The control is
the mean change of a few random words that the training data ties to no class, inserted at
the same boundaries: what any inserted word does (a longer text, a less certain model).
Per class c, over the texts of the other classes:

- `insertion`: the mean rise of p(c) when w is inserted (how far w pulls toward c);
- `control`: the same for the random words;
- `net`: insertion minus control, per text (the rise that w's identity causes);
- `reliance`: c's net minus the mean net of the other classes (each over the texts of its
  own other classes): toward c and away from the rest. A word that the model treats alike
  for every class (it makes every prediction less sure, or it is spread evenly over the
  classes) scores near zero; one that pulls only toward c scores its full pull and more.

Each has a 95% percentile bootstrap interval over the texts (one resampling for all).

Letter legend: N texts, C classes, R resamples.
"""

import numpy as np

from inspection.methods.bootstrap import BOOTSTRAP_RESAMPLES
from inspection.methods.forward_passes import probabilities
from inspection.methods.word_reliance import inserted


def insertion_changes(
    classifier, token_ids, sites, pieces, cap, keep_last, base, batch_size, boundaries=None
):
    """Per text, every class's probability with the word's `pieces` inserted at the text's
    site minus without (`base`, (N, C)): float64 (N, C). See `word_reliance.inserted` for
    `cap`, `keep_last` and `boundaries`."""
    if len(token_ids) == 0:
        return np.zeros((0, base.shape[-1]))
    edited = inserted(token_ids, sites, pieces, cap, keep_last, boundaries)
    return probabilities(classifier, edited, batch_size) - base


class ClassReliance:
    """The per-class summaries of insertion changes against a control, for one set of
    texts: their gold labels (N,) and the bootstrap resamples shared by every word.

    Example:
    >>> labels = np.array([0, 0, 1, 1])
    >>> measure = ClassReliance(labels, num_classes=2, resamples=10)
    >>> changes = np.array([[-0.3, 0.3], [-0.1, 0.1], [0.0, 0.0], [0.0, 0.0]])
    >>> summary = measure(changes, control=np.zeros((4, 2)))
    >>> summary["insertion"].tolist(), summary["reliance"].tolist()
    ([0.0, 0.2], [-0.2, 0.2])
    """

    def __init__(self, labels, num_classes, resamples=BOOTSTRAP_RESAMPLES, seed=0):
        labels = np.asarray(labels, dtype=np.int64)
        # others[n, c]: text n is of another class than c, the texts c's effects are read on.
        self.others = (labels[:, None] != np.arange(num_classes)[None, :]).astype(np.float64)
        rng = np.random.default_rng(seed)
        self.samples = rng.integers(0, len(labels), (resamples, len(labels)))  # (R, N)

    def __call__(self, changes, control):
        """{"insertion", "control", "net", "reliance"} (C,) each, and each one's interval
        "<name>_ci" (C, 2), from the word's and the control's changes (N, C)."""
        changes, control = np.asarray(changes), np.asarray(control)
        full = self._means(changes, control, self.others)  # each (C,)
        resampled = self._means(
            changes[self.samples], control[self.samples], self.others[self.samples]
        )  # each (R, C)
        summary = {}
        for name, value in full.items():
            summary[name] = value
            summary[f"{name}_ci"] = np.percentile(resampled[name], [2.5, 97.5], axis=0).T
        return summary

    @staticmethod
    def _means(changes, control, others):
        """The four summaries of (..., N, C) arrays, over the texts of the other classes."""
        counts = np.maximum(others.sum(axis=-2), 1)  # (..., C)
        insertion = (changes * others).sum(axis=-2) / counts
        random = (control * others).sum(axis=-2) / counts
        net = insertion - random
        classes = net.shape[-1]
        rest = (net.sum(axis=-1, keepdims=True) - net) / max(classes - 1, 1)
        return {"insertion": insertion, "control": random, "net": net, "reliance": net - rest}
