"""Attention heads across a dataset: what each one looks at, and how much it matters.

- `attention_statistics`: per layer and head, averaged over real query tokens and then
  over examples, the share of attention on the class token ([CLS], <s>), on the
  separator ([SEP], </s>), on punctuation, on the token itself, on the previous and on
  the next token; the mean attention distance (in tokens); the entropy of each row,
  normalised by log(real tokens) (Clark et al. 2019, "What does BERT look at?").
- `head_importance`: Michel et al. 2019 ("Are sixteen heads really better than one?"):
  |dL / d head_mask| of the cross-entropy at a head mask of ones, from one backward pass per
  batch, summed over batches and divided by the number of examples.
- `head_ablation`: the measured check: the drop of accuracy and the rise of mean loss when
  one head alone is masked.

All take the classifier's one forward pass (`models.TransformerClassifier`).
Letter legend: B batch, T token ids, A attended positions, L layers, N heads, C classes.
"""

import string

import keras
import numpy as np
import tensorflow as tf

from inspection.attention_tokens import (
    real_tokens,
    stack_block_scores,
    trim_scores,
    trimmed_to_longest,
)
from inspection.token_schemes import token_scheme

STATISTICS = (
    "to_cls",
    "to_sep",
    "to_punctuation",
    "to_self",
    "to_previous",
    "to_next",
    "mean_distance",
    "entropy",
)


def map_statistics(maps, tokens, scheme):
    """The statistics of one example's maps (L, N, A, A) over its A real tokens (names, with
    the class token and separators where they are): {name: (L, N) float64}, averaged over
    the queries. `scheme`: the tokenizer's `TokenScheme`, which names its class token
    (`start`) and separator (`end`) and reads a piece's characters.

    Example:
    >>> from inspection.token_schemes import WORD_PIECE
    >>> maps = np.array([[[[1.0, 0.0], [0.5, 0.5]]]])  # 1 layer, 1 head, 2 tokens
    >>> stats = map_statistics(maps, ["[CLS]", "film"], WORD_PIECE)
    >>> float(stats["to_cls"][0, 0]), float(stats["to_self"][0, 0])
    (0.75, 0.75)
    """
    maps = np.asarray(maps, dtype=np.float64)  # (L, N, A, A)
    length = maps.shape[-1]
    positions = np.arange(length)

    def share_on(keys):  # (A,) bool -> (L, N): mean over queries of the weight on those keys
        return maps[..., keys].sum(axis=-1).mean(axis=-1)

    diagonal = np.diagonal(maps, axis1=-2, axis2=-1)  # (L, N, A)
    previous = np.diagonal(maps, offset=-1, axis1=-2, axis2=-1)  # (L, N, A - 1): A[i, i-1]
    following = np.diagonal(maps, offset=1, axis1=-2, axis2=-1)  # (L, N, A - 1): A[i, i+1]
    distance = np.abs(positions[:, None] - positions[None, :])  # (A, A)
    with np.errstate(divide="ignore", invalid="ignore"):
        row_entropy = -np.where(maps > 0, maps * np.log(maps), 0.0).sum(axis=-1)  # (L, N, A)
    return {
        "to_cls": share_on(np.array([token == scheme.start for token in tokens])),
        "to_sep": share_on(np.array([token == scheme.end for token in tokens])),
        "to_punctuation": share_on(
            np.array([_is_punctuation(scheme.join([token])) for token in tokens])
        ),
        "to_self": diagonal.mean(axis=-1),
        # Over all queries: the first has no previous token and the last no next one.
        "to_previous": previous.sum(axis=-1) / length,
        "to_next": following.sum(axis=-1) / length,
        "mean_distance": (maps * distance).sum(axis=-1).mean(axis=-1),
        "entropy": (row_entropy / np.log(length)).mean(axis=-1)
        if length > 1
        else np.zeros(maps.shape[:2]),
    }


def attention_statistics(classifier, token_ids, vocabulary, class_token, batch_size=32):
    """`map_statistics` of every example of `token_ids` (E, T), averaged over the examples:
    {name: (L, N) float64}. `class_token`: the maps have a learned class token first."""
    token_ids = np.asarray(token_ids)
    sums, count = {name: 0.0 for name in STATISTICS}, 0
    scheme = token_scheme(vocabulary)
    for start in range(0, len(token_ids), batch_size):
        ids = trimmed_to_longest(token_ids[start : start + batch_size])
        scores = stack_block_scores(
            classifier(ids, training=False, return_attention_scores=True)
        )  # (B, L, N, A, A)
        for row_ids, row_maps in zip(ids, scores, strict=True):
            tokens = real_tokens(row_ids, vocabulary, class_token)
            if not tokens:
                continue
            stats = map_statistics(trim_scores(row_maps, row_ids, class_token), tokens, scheme)
            sums = {name: sums[name] + stats[name] for name in STATISTICS}
            count += 1
    return {name: np.asarray(sums[name]) / max(count, 1) for name in STATISTICS}


def head_importance(classifier, token_ids, labels, batch_size=32):
    """Michel et al.'s importance (L, N) float64: the mean over the examples of
    |dL_x / d head_mask|, each example's cross-entropy L_x differentiated at a mask of
    ones; one backward pass per batch gives every example's gradient, through a mask of
    its own (B, L, N). A multi-label classifier's L_x is its binary cross-entropy, the
    mean over the labels (`labels` multi-hot (E, C)), as it was trained."""
    shape = _head_mask_shape(classifier)
    importance = np.zeros(shape)
    for start in range(0, len(token_ids), batch_size):
        ids = tf.constant(trimmed_to_longest(token_ids[start : start + batch_size]), tf.int64)
        targets = tf.constant(np.asarray(labels[start : start + batch_size]), tf.int64)
        mask = tf.ones((len(targets), *shape), tf.float32)  # (B, L, N)
        with tf.GradientTape() as tape:
            tape.watch(mask)
            logits = classifier(ids, training=False, head_mask=mask, return_logits=True)["logits"]
            # Each example's mask reaches only its own loss: the sum's gradient is theirs.
            loss = tf.reduce_sum(_example_losses(targets, logits, classifier.multi_label))
        importance += np.abs(tape.gradient(loss, mask).numpy()).sum(axis=0)
    return importance / max(len(token_ids), 1)


def head_ablation(classifier, token_ids, labels, batch_size=32):
    """(accuracy drop, loss increase, loss change) (L, N) each: every head masked alone,
    against the full model, over the examples (a multi-label classifier's accuracy: the
    share of its label decisions right at 0.5; its loss the binary cross-entropy). The
    loss change is the mean of each example's |change of loss|: what Michel et al.'s
    importance estimates to first order (a head can help some examples and hurt others,
    which the mean increase nets out).

    Masking a head of block l leaves the blocks below it as they are: their states are
    computed once per block and every head of block l runs from there (`start_block`),
    in one traced function per block."""
    shape = _head_mask_shape(classifier)
    encoder = classifier.encoder
    batches = [
        (
            trimmed_to_longest(token_ids[start : start + batch_size]),
            np.asarray(labels[start : start + batch_size]),
        )
        for start in range(0, len(token_ids), batch_size)
    ]
    ids_spec = tf.TensorSpec((None, None), tf.int64)
    states_spec = tf.TensorSpec((None, None, encoder.d_model), tf.float32)
    mask_spec = tf.TensorSpec(shape, tf.float32)

    def scores(layer):
        states = [encoder.lower_states(ids, layer) for ids, _ in batches]  # (B, A, D) each
        top = tf.function(
            lambda ids, hidden, mask: classifier(
                ids, training=False, hidden_states=hidden, start_block=layer, head_mask=mask
            ),
            input_signature=[ids_spec, states_spec, mask_spec],
        )

        def of(mask):  # (share right (E,), cross-entropy (E,)) under `mask`
            predicted = np.concatenate(
                [
                    top(ids, hidden, mask).numpy().astype(np.float64)
                    for (ids, _), hidden in zip(batches, states)
                ]
            )
            return _scored(predicted, targets, classifier.multi_label)

        return of

    drops, rises, changes = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    if not batches:
        return drops, rises, changes
    targets = np.concatenate([batch_labels for _, batch_labels in batches])
    for layer in range(shape[0]):
        of = scores(layer)
        if layer == 0:  # The full model: from the embedding's states, as block 0's heads.
            full_correct, full_losses = of(np.ones(shape, np.float32))
        for head in range(shape[1]):
            mask = np.ones(shape, np.float32)
            mask[layer, head] = 0.0
            correct, losses = of(mask)
            drops[layer, head] = full_correct.mean() - correct.mean()
            rises[layer, head] = (losses - full_losses).mean()
            changes[layer, head] = np.abs(losses - full_losses).mean()
    return drops, rises, changes


def _example_losses(targets, logits, multi_label):
    """Each example's cross-entropy (B,) of its logits, as the classifier was trained."""
    if multi_label:
        return keras.losses.binary_crossentropy(
            tf.cast(targets, tf.float32), logits, from_logits=True
        )
    return keras.losses.sparse_categorical_crossentropy(targets, logits, from_logits=True)


def _scored(predicted, targets, multi_label):
    """(share right (E,), cross-entropy (E,)) of probabilities `predicted` (E, C).

    Example:
    >>> right, losses = _scored(np.array([[0.9, 0.2]]), np.array([[1, 1]]), True)
    >>> right.tolist(), [round(float(loss), 4) for loss in losses]  # -(ln .9 + ln .2) / 2
    ([0.5], [0.8574])
    """
    if multi_label:
        targets = np.asarray(targets, np.float64)
        given = np.clip(np.where(targets > 0.5, predicted, 1 - predicted), 1e-12, 1.0)
        return ((predicted >= 0.5) == (targets > 0.5)).mean(axis=1), -np.log(given).mean(axis=1)
    picked = predicted[np.arange(len(targets)), targets]
    return predicted.argmax(axis=-1) == targets, -np.log(np.maximum(picked, 1e-12))


def _head_mask_shape(classifier):
    counts = classifier.encoder.head_counts
    return (len(counts), counts[0])


def _is_punctuation(token):
    return bool(token) and all(character in string.punctuation for character in token)
