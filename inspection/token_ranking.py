"""Each text's words ranked by attention rollout importance: predict.py's explanations."""

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from inspection.attention_tokens import (
    ATTENTION_BATCH_SIZE,
    has_class_token,
    real_tokens,
    stack_block_scores,
    trim_scores,
)
from inspection.rollout import token_importance
from inspection.word_pieces import (
    is_word_piece,
    join_pieces,
    word_index,
    word_pieces_of,
    word_sums,
)


class RankedWord(NamedTuple):
    """One word of a text and its share of the rollout.

    token: the word; a WordPiece model's pieces joined ("play" "##ed" -> "played").
    position: the word's index among the text's words, from 0 (a word-level model's token
        position).
    importance: the sum of its pieces' rollout importance.
    pieces: its tokens as the model saw them: one for a word-level model.
    """

    token: str
    position: int
    importance: float
    pieces: tuple


def rank_tokens(run, texts, top=None):
    """Per text, its words as `RankedWord`s, most important first.

    Importance is the token's share of the attention rollout (Abnar & Zuidema, 2020) as the
    run's pooling reads it; a word's is the sum of its WordPiece pieces'. The class token of
    `pooling: cls` and WordPiece's "[CLS]" and "[SEP]" are no words of the text and are not
    ranked, so with WordPiece the importances sum to less than 1. Texts longer than the
    run's sequence length are cut.

    Args:
        run: a `runs.Run`.
        texts: raw strings.
        top: keep the `top` most important words; None keeps all.
    """
    vectorizer, _ = run.parts
    vocabulary = vectorizer.get_vocabulary()
    word_pieces = is_word_piece(vocabulary)
    class_token = has_class_token(run.pooling, vocabulary)
    rankings = []
    for start in range(0, len(texts), ATTENTION_BATCH_SIZE):
        batch = tf.constant(texts[start:start + ATTENTION_BATCH_SIZE])
        token_ids = np.asarray(vectorizer(batch))  # (B, T)
        scores = stack_block_scores(run.attention_model(token_ids, training=False))
        for ids, example_scores in zip(token_ids, scores, strict=True):
            tokens = real_tokens(ids, vocabulary, class_token)  # (A,)
            trimmed = trim_scores(example_scores, ids, class_token)  # (L, N, A, A), real only
            importance = token_importance(trimmed, run.pooling)  # (A,)
            indices = word_index(tokens, word_pieces, class_token)
            pieces = word_pieces_of(tokens, indices)
            totals = word_sums(importance, indices)  # (W,)
            order = np.argsort(-totals, kind="stable")[:top]
            rankings.append([
                RankedWord(join_pieces(pieces[word]), int(word), float(totals[word]),
                           tuple(pieces[word]))
                for word in order
            ])  # fmt: skip
    return rankings
