"""Each text's tokens ranked by attention rollout importance: predict.py's explanations."""

import numpy as np
import tensorflow as tf

from inspection.attention_tokens import (
    ATTENTION_BATCH_SIZE,
    has_class_token,
    stack_block_scores,
    token_positions,
    trim_scores,
)
from inspection.rollout import token_importance


def rank_tokens(run, texts, top=None):
    """Per text, `(token, position, importance)` of its real tokens, most important first.

    Importance is the token's share of the attention rollout (Abnar & Zuidema, 2020) as the
    run's pooling reads it; the class token of `pooling: cls` is left out, positions count
    the text's tokens from 0. Texts longer than the run's sequence length are cut.

    Args:
        run: a `runs.Run`.
        texts: raw strings.
        top: keep the `top` most important tokens; None keeps all.
    """
    vectorizer, _ = run.parts
    vocabulary = vectorizer.get_vocabulary()
    class_token = has_class_token(run.pooling)
    rankings = []
    for start in range(0, len(texts), ATTENTION_BATCH_SIZE):
        batch = tf.constant(texts[start:start + ATTENTION_BATCH_SIZE])
        token_ids = np.asarray(vectorizer(batch))  # (B, T)
        scores = stack_block_scores(run.attention_model(token_ids, training=False))
        for ids, example_scores in zip(token_ids, scores, strict=True):
            positions = token_positions(ids)  # (T,)
            trimmed = trim_scores(example_scores, ids, class_token)  # (L, N, A, A), real only
            # The class token's own importance is left out: it is not a word of the text.
            importance = token_importance(trimmed, run.pooling)[int(class_token):]  # (T,)
            order = np.argsort(-importance, kind="stable")[:top]
            rankings.append([
                (vocabulary[ids[positions[i]]], int(positions[i]), float(importance[i]))
                for i in order
            ])  # fmt: skip
    return rankings
