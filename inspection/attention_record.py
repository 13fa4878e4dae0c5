"""One exported example: its tokens, attention maps, prediction and rollout."""

import dataclasses

import numpy as np


@dataclasses.dataclass
class AttentionRecord:
    """The attention of one example over its real tokens (padding removed).

    Letter legend: L layers, N heads, T real tokens, C classes.

    Attributes:
        example_id: str made of letters, digits, `_`, `-` and `.`; names the
            arrays and image files of this example.
        text: the raw input string.
        tokens: list of T token strings, as the model saw them (after
            standardisation and truncation).
        attention_scores: float32 array (L, N, T, T), post-softmax, queries on
            axis 2, keys on axis 3; each row sums to 1.
        probabilities: float32 array (C,).
        predicted_label_index: int, argmax of `probabilities`.
        true_label_index: int, or None when the label is unknown (prediction).
        rollout_importance: float64 array (T,) summing to 1; see
            `rollout.rollout_importance`.
        probability_difference: largest |fast path - scores path| over the
            classes of this example, or None when not checked.

    Example:
    >>> record = AttentionRecord(
    ...     example_id="0", text="good film", tokens=["good", "film"],
    ...     attention_scores=np.full((1, 1, 2, 2), 0.5, "float32"),
    ...     probabilities=np.array([0.2, 0.8], "float32"), predicted_label_index=1)
    >>> record.num_tokens
    2
    """

    example_id: str
    text: str
    tokens: list
    attention_scores: np.ndarray
    probabilities: np.ndarray
    predicted_label_index: int
    true_label_index: int | None = None
    rollout_importance: np.ndarray | None = None
    probability_difference: float | None = None

    @property
    def num_tokens(self):
        return len(self.tokens)
