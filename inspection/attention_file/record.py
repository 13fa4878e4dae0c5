"""One exported example: its tokens, attention maps, prediction, rollout and attributions."""

import dataclasses

import numpy as np

from inspection.token_schemes import WORD_LEVEL
from inspection.word_pieces import word_pieces_of, word_sums


@dataclasses.dataclass
class AttentionRecord:
    """The attention of one example over its real tokens (padding removed).

    Letter legend: L layers, N heads, T real tokens, C classes.

    Attributes:
        example_id: str made of letters, digits, `_`, `-` and `.`; names the
            arrays and image files of this example.
        text: the raw input string.
        tokens: list of T token strings, as the model saw them (after
            standardisation and truncation): words, or WordPiece pieces.
        attention_scores: float32 array (L, N, T, T), post-softmax, queries on
            axis 2, keys on axis 3; each row sums to 1.
        probabilities: float32 array (C,).
        predicted_label_index: int, argmax of `probabilities`.
        true_label_index: int, or None when the label is unknown (prediction).
        rollout_importance: float64 array (T,) summing to 1; see
            `rollout.rollout_importance`.
        probability_difference: largest |fast path - scores path| over the
            classes of this example, or None when not checked.
        word_index: list of T ints or None: the index of the word each token
            belongs to (see `TokenScheme.word_index`), None for a special token
            ("[CLS]", "<s>"). None: every token is a word of its own.
        word_texts: the W words' texts, each its pieces joined by the tokenizer's
            `TokenScheme` ("play" "##ed" -> "played"; see `words`). None: the tokens of
            each word joined as they are (a word-level model's).
        attributions: dict of method name (`inspection.methods.attribution.METHODS`) -> float64
            array (T,): each method's scores for the predicted class, higher = more in
            its favour, 0 at the learned class token of a word-level `pooling: cls`
            model (no token id, so no method scores it). None: none computed.

    Example:
    >>> record = AttentionRecord(
    ...     example_id="0", text="good film", tokens=["good", "film"],
    ...     attention_scores=np.full((1, 1, 2, 2), 0.5, "float32"),
    ...     probabilities=np.array([0.2, 0.8], "float32"), predicted_label_index=1)
    >>> record.num_tokens, record.words
    (2, ['good', 'film'])
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
    word_index: list | None = None
    attributions: dict | None = None
    word_texts: list | None = None

    @property
    def num_tokens(self):
        return len(self.tokens)

    @property
    def token_word_index(self):
        """`word_index`, or 0 ... T - 1 when every token is its own word."""
        return list(range(self.num_tokens)) if self.word_index is None else list(self.word_index)

    @property
    def special(self):
        """Per token, whether it is a special token rather than (a piece of) a word."""
        return [index is None for index in self.token_word_index]

    @property
    def words(self):
        """The example's words: `word_texts`, or each word's tokens joined."""
        if self.word_texts is not None:
            return list(self.word_texts)
        return WORD_LEVEL.words(self.tokens, self.token_word_index)

    @property
    def word_pieces(self):
        """The tokens of each word."""
        return word_pieces_of(self.tokens, self.token_word_index)

    @property
    def word_importance(self):
        """Per word, the sum of its tokens' rollout importance (special tokens left out)."""
        if self.rollout_importance is None:
            return None
        return word_sums(self.rollout_importance, self.token_word_index)

    @property
    def word_attributions(self):
        """Per method, the word sums of its scores (special tokens left out): {method: (W,)}."""
        return {
            method: word_sums(scores, self.token_word_index)
            for method, scores in (self.attributions or {}).items()
        }
