"""Each text's words ranked by an attribution method, and a text's prediction with them:
predict.py's explanations."""

import dataclasses
from typing import NamedTuple

import numpy as np
import tensorflow as tf

from inspection.attention_tokens import real_tokens
from inspection.methods.attribution import attribute
from inspection.token_schemes import token_scheme
from inspection.word_pieces import word_pieces_of, word_sums


class RankedWord(NamedTuple):
    """One word of a text and its score.

    token: the word; a checkpoint's pieces joined ("play" "##ed" -> "played").
    position: the word's index among the text's words, from 0 (a word-level model's token
        position).
    importance: the sum of its pieces' scores under the method (`inspection.methods.attribution`):
        a share of the rollout, a drop in probability, a logit contribution...
    pieces: its tokens as the model saw them: one for a word-level model.
    """

    token: str
    position: int
    importance: float
    pieces: tuple


@dataclasses.dataclass
class Prediction:
    """One text's prediction (predict.py's, the live lab's); `tokens` is None unless
    explained.

    `tokens` lists `RankedWord`s `(token, position, importance, pieces)`, the
    text's words, most important first (see `inspection.rank_tokens`); `word_pieces`: the
    model reads a checkpoint's pieces, so a word may be several. A multi-label run's
    `predicted_labels` is the text's set (each label at or over its threshold);
    `predicted_label` is then its most probable label, the one explained unless
    `explained_label` names another. `abstained`:
    with an abstention threshold (`predict.py --abstain-below`), whether the top
    probability was under it; `predicted_label` is then "abstain".
    """

    text: str
    predicted_label: str
    probabilities: dict
    tokens: list | None = None
    known_tokens: int = 0
    line: int | None = None  # Its line in the texts file; None for an argument.
    word_pieces: bool = False
    method: str | None = None  # The attribution method of `tokens`.
    predicted_labels: list | None = None  # A multi-label run's set.
    abstained: bool | None = None  # None: no threshold was given.
    explained_label: str | None = None  # The class `tokens` explain, when not the predicted.

    @property
    def number(self) -> str:
        return f"line {self.line}" if self.line is not None else ""

    def as_json(self) -> dict:
        """What `predict.py --json` prints of the text, and the live lab answers."""
        item = {
            "text": self.text,
            "predicted_label": self.predicted_label,
            **(
                {"predicted_labels": self.predicted_labels}
                if self.predicted_labels is not None
                else {}
            ),
            **({"abstained": self.abstained} if self.abstained is not None else {}),
            "probabilities": self.probabilities,
            "known_tokens": self.known_tokens,
        }
        if self.line is not None:
            item["line"] = self.line
        if self.tokens is not None:
            item["explanation_method"] = self.method
            if self.explained_label is not None:
                item["explained_label"] = self.explained_label
            item["tokens"] = [
                {
                    "token": word.token,
                    "position": word.position,
                    "importance": word.importance,
                    # A checkpoint's word: the pieces it was read as.
                    **({"pieces": list(word.pieces)} if self.word_pieces else {}),
                }
                for word in self.tokens
            ]
        return item


def rank_tokens(run, texts, top=None, method="rollout", label=None):
    """Per text, its words as `RankedWord`s, most important first.

    A word's score is the sum of its pieces' under `method` (one of
    `attribution.METHODS`), for the predicted class, or toward the class `label` names.
    The class token of `pooling: cls` and a checkpoint's special tokens ("[CLS]", "</s>")
    are no words of the text and are not ranked. Texts longer than the run's sequence
    length are cut.

    Args:
        run: a `saved_run.Run`.
        texts: raw strings.
        top: keep the `top` most important words; None keeps all.
        method: the attribution method.
        label: a class name of the run; None: each text's predicted class (a multi-label
            run's most probable label).
    """
    vectorizer, classifier = run.parts
    vocabulary = vectorizer.get_vocabulary()
    scheme = token_scheme(vocabulary)
    token_ids = np.asarray(vectorizer(tf.constant(list(texts))))  # (B, T)
    classes = None if label is None else np.full(len(token_ids), run.class_names.index(label))
    scores = attribute(classifier, token_ids, method, run.pooling, classes)  # (B, T)
    rankings = []
    for ids, example_scores in zip(token_ids, scores, strict=True):
        tokens = real_tokens(ids, vocabulary, class_token=False)  # (A,)
        indices = scheme.word_index(tokens)
        rankings.append(ranked_words(tokens, indices, example_scores[ids != 0], scheme, top))
    return rankings


def ranked_words(tokens, indices, scores, scheme, top=None):
    """The words of one text's tokens (A,) as `RankedWord`s, most important first.

    Args:
        tokens: the tokens as the model saw them.
        indices: per token its word's index, None for a special token (`word_index`).
        scores: per token its score (A,); a word's is the sum of its pieces'.
        scheme: the tokenizer's `TokenScheme`, which joins a word's pieces.
        top: keep the `top` most important words; None keeps all.

    Example:
    >>> from inspection.token_schemes import WORD_PIECE
    >>> [word.token for word in ranked_words(["[CLS]", "play", "##ed", "well", "[SEP]"],
    ...                                      [None, 0, 0, 1, None], [9, 1, 2, 4, 9],
    ...                                      WORD_PIECE)]
    ['well', 'played']
    """
    pieces = word_pieces_of(tokens, indices)
    totals = word_sums(np.asarray(scores, dtype=np.float64), indices)  # (W,)
    order = np.argsort(-totals, kind="stable")[:top]
    return [
        RankedWord(scheme.join(pieces[word]), int(word), float(totals[word]), tuple(pieces[word]))
        for word in order
    ]
