"""The attribution scores an attention export stores: every method of
`inspection.methods.attribution`, per example, over the export's real tokens.

`attribute` scores token id positions; the export's tokens are the real ids, after the
learned class token of a word-level `pooling: cls` model. That class token is no token id,
so no method scores it: it gets 0. WordPiece's "[CLS]" and "[SEP]" are token ids and keep
their scores (the words' sums leave them out, as they leave out every special token).
`rollout` is read off the maps the export already holds (`attribute`'s rollout is the same
computation on the same maps), so it needs no classifier and no second forward pass.

Cost per example: `integrated_gradients` is one backward pass of 32 rows (its steps),
`leave_one_out` T forward rows, the other methods a share of one batched pass; pass fewer
`methods` to export many long examples quickly.

Letter legend: B batch, T token ids (padded), T' one example's real tokens.
"""

import time

import numpy as np

from inspection.methods.attribution import METHODS, attribute
from inspection.word_pieces import PADDING_ID

# Read off the export's own attention maps; every other method needs the classifier.
MAPS_METHOD = "rollout"


def check_methods(methods, classifier):
    """The methods an export computes, in `METHODS` order.

    None: all of them with a classifier, only rollout without one.

    Example:
    >>> check_methods(["leave_one_out", "rollout"], classifier=object())
    ('rollout', 'leave_one_out')
    >>> check_methods(None, classifier=None)
    ('rollout',)
    """
    if methods is None:
        return METHODS if classifier is not None else (MAPS_METHOD,)
    if isinstance(methods, str):
        raise ValueError(
            f"methods must be a list of method names, not one string. Received: methods={methods!r}"
        )
    methods = list(methods)
    unknown = [method for method in methods if method not in METHODS]
    if unknown:
        raise ValueError(f"methods must be names from {METHODS}. Received: methods={methods}")
    needing_model = [method for method in methods if method != MAPS_METHOD]
    if needing_model and classifier is None:
        raise ValueError(
            f"methods {needing_model} need the classifier (token ids -> probabilities, "
            "`get_model_parts(model)[1]`): pass classifier=..., or methods=['rollout']."
        )
    return tuple(method for method in METHODS if method in methods)


class BatchAttributions:
    """Every method's scores of one export batch, and the seconds each method took.

    Example:
    >>> # scores = BatchAttributions(classifier, ("rollout", "leave_one_out"), "mean")
    >>> # scores.compute(token_ids, classes, seed=0)            # once per batch
    >>> # scores.of_example(0, token_ids[0], rollout, class_token=False)
    """

    def __init__(self, classifier, methods, pooling):
        self.classifier = classifier
        self.methods = tuple(methods)
        self.pooling = pooling
        self.seconds = dict.fromkeys(self.methods, 0.0)
        self.num_examples = 0
        self._scores = {}

    def compute(self, token_ids, classes, seed):
        """Scores the batch's token ids (B, T) for `classes` (B,) with every method but
        rollout; `seed` seeds `random` (the batch's first example index: batches differ)."""
        self._scores = {}
        for method in self.methods:
            if method == MAPS_METHOD:
                continue
            start = time.perf_counter()
            self._scores[method] = attribute(
                self.classifier, token_ids, method, self.pooling, classes=classes, seed=seed
            )  # (B, T)
            self.seconds[method] += time.perf_counter() - start
        self.num_examples += len(token_ids)

    def of_example(self, row, token_ids, rollout_importance, class_token):
        """One example's scores over its export tokens: {method: float64 (T',)}.

        Args:
            row: the example's row in the batch.
            token_ids: its ids (T,), padding included.
            rollout_importance: its rollout over the export tokens (T',), the class token's
                included.
            class_token: token 0 of the export is the learned class token (scored 0).
        """
        scores = {}
        for method in self.methods:
            if method == MAPS_METHOD:
                values = np.array(rollout_importance, dtype=np.float64)  # (T',)
                if class_token:
                    values[0] = 0.0
            else:
                values = self._scores[method][row][np.asarray(token_ids) != PADDING_ID]
                if class_token:
                    values = np.concatenate([[0.0], values])  # (T',)
            scores[method] = values
        return scores

    def seconds_per_example(self):
        """{method: mean seconds per example}; rollout's share of the export's pass is 0."""
        count = max(self.num_examples, 1)
        return {method: self.seconds[method] / count for method in self.methods}
