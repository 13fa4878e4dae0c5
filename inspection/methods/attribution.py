"""Attribution methods: how much each token of a text counts for the predicted class.

Every method scores the token ids of a batch for one class per example (by default the
predicted one) and returns float64 scores (B, T) over the id positions, 0 at padding;
higher means more in favour of the class. What they differentiate or read comes from the
classifier's one forward pass, asked for its logits, attention scores and hooks.

- `rollout`: attention rollout (Abnar & Zuidema, 2020), `inspection.methods.rollout`.
- `last_attention`: the last block's attention, heads averaged, from the class position
  (`pooling: cls`) or averaged over the pooled queries.
- `gradient_x_input`: the class logit's gradient with respect to each token vector, dotted
  with it.
- `conservative_gradient_x_input`: the same with the attention weights and the
  LayerNorms' 1 / std held constant (Ali et al., ICML 2022), so relevance is conserved.
- `attention_gradient`: Chefer et al. (ICCV 2021): per block the heads' mean of
  `(grad A * A)+`, rolled out as `R = R + mean_h((grad A * A)+) R` from `R = I`.
- `integrated_gradients`: Sundararajan et al. (2017), from the padding token's vector at
  every position to the text's, 32 midpoint steps.
- `leave_one_out`: the drop in the class probability when one token is removed (masked
  out of attention and pooling), one forward pass per token: the expensive reference.
- `random`: uniform random scores, the floor.

Gradients use the backend's autodiff (TensorFlow's tape, `jax.grad`, `torch.autograd`).
Letter legend: B batch, T token ids, A attended positions, D model size, L blocks, N heads.
"""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from config import ATTRIBUTION_METHODS
from inspection.attention_tokens import real_positions, trimmed_to_longest
from inspection.methods.forward_passes import (
    BATCH_SIZE,
    attention_forward,
    class_probabilities,
    compiled,
    predicted_classes,
)
from inspection.methods.rollout import rollout_importance, token_importance
from layers.local_blocks import block_diagonal_scores
from models import token_vectors

METHODS = ATTRIBUTION_METHODS
# What predict.py and the viewer explain with when a run has no faithfulness measurement:
# one forward and one backward pass, and first by AOPC comprehensiveness on four of the six
# models of bench/bench_faithfulness.py, close behind on the others
# (docs/explanations.md#measured).
DEFAULT_METHOD = "conservative_gradient_x_input"
INTEGRATED_GRADIENTS_STEPS = 32


def attribute(classifier, token_ids, method, pooling, classes=None, seed=0, batch_size=BATCH_SIZE):
    """Scores every token of every text for its class with one method.

    Args:
        classifier: a model from `build_classifier` (a run's `run.parts[1]`).
        token_ids: int array (B, T), padding (id 0) at the end.
        method: one of `METHODS`.
        pooling: the classifier's pooling ("mean", "max" or "cls"): which query
            positions the attention methods read.
        classes: int array (B,), the class to explain per text; None: the predicted one.
        seed: seeds `random`.
        batch_size: texts (rows, for Integrated Gradients' steps and leave-one-out's
            variants) per pass.

    Returns:
        float64 array (B, T): one score per token id, 0 at padding.

    Example:

    >>> from config import ModelConfig
    >>> from models import build_classifier
    >>> config = ModelConfig(d_model=16, num_heads=2, num_layers=1, intermediate_dim=32)
    >>> classifier = build_classifier(config, 50, sequence_length=8, num_classes=2)
    >>> scores = attribute(classifier, np.array([[5, 6, 7, 0]]), "rollout", "mean")
    >>> scores.shape, float(scores[0, 3])
    ((1, 4), 0.0)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}. Received: method={method!r}")
    token_ids = np.asarray(token_ids, dtype=np.int64)
    if classes is None:
        classes = predicted_classes(classifier, token_ids, batch_size)
    classes = np.asarray(classes, dtype=np.int64)
    if method == "random":
        return np.random.default_rng(seed).random(token_ids.shape) * (token_ids != 0)
    scores = np.zeros(token_ids.shape, dtype=np.float64)
    # Integrated Gradients runs 32 rows per text: as many texts as fill a batch of rows.
    step = batch_size
    if method == "integrated_gradients":
        step = max(1, batch_size // INTEGRATED_GRADIENTS_STEPS)
    for start in range(0, len(token_ids), step):
        ids = trimmed_to_longest(token_ids[start : start + step])  # (b, T')
        rows = slice(start, start + len(ids))
        if method == "leave_one_out":  # Its b x T' variants in batches of rows.
            scores[rows, : ids.shape[1]] = _leave_one_out(
                classifier, ids, classes[rows], batch_size
            )
        else:
            scores[rows, : ids.shape[1]] = _METHODS[method](classifier, ids, classes[rows], pooling)
    return scores


def _rollout(classifier, ids, classes, pooling):
    scores = _head_means(attention_forward(classifier, ids)["attention_scores"])
    return _per_example(classifier, ids, scores, lambda maps: token_importance(maps, pooling))


def _last_attention(classifier, ids, classes, pooling):
    scores = _head_means(attention_forward(classifier, ids)["attention_scores"])
    query_index = 0 if pooling == "cls" else None
    return _per_example(
        classifier, ids, scores, lambda maps: rollout_importance(maps[-1].mean(axis=0), query_index)
    )


def _gradient_x_input(classifier, ids, classes, pooling, conservative=False):
    name = "conservative_gradient_x_input" if conservative else "gradient_x_input"
    gradient, vectors = compiled(
        classifier,
        name,
        lambda model, ids, classes: _vector_gradient(model, ids, classes, conservative),
    )(ops.convert_to_tensor(ids, "int64"), ops.convert_to_tensor(classes, "int64"))
    return np.sum(_numpy(gradient) * _numpy(vectors), axis=-1)  # (B, T)


def _vector_gradient(classifier, ids, classes, conservative):
    """The class logit's gradient with respect to the token vectors (B, T, D), and those."""
    options = (
        dict(attention_weights_fn=ops.stop_gradient, detach_norm_scale=True) if conservative else {}
    )
    vectors = token_vectors(classifier, ids)  # (B, T, D)
    [gradient] = _gradients(
        lambda v: _class_logits(classifier, ids, classes, v, **options), [vectors]
    )
    return gradient, vectors


def _conservative_gradient_x_input(classifier, ids, classes, pooling):
    return _gradient_x_input(classifier, ids, classes, pooling, conservative=True)


def _integrated_gradients(classifier, ids, classes, pooling):
    """A few texts (b, T): their b x 32 interpolation steps go through one backward pass."""
    steps = INTEGRATED_GRADIENTS_STEPS
    vectors = _numpy(token_vectors(classifier, ids))[:, None]  # (b, 1, T, D)
    baseline = _numpy(token_vectors(classifier, np.zeros_like(ids)))[:, None]  # padding's
    alphas = ((np.arange(steps) + 0.5) / steps)[:, None, None]  # (S, 1, 1), midpoints
    path = (baseline + alphas * (vectors - baseline)).astype(np.float32)  # (b, S, T, D)
    path = path.reshape((-1,) + path.shape[2:])  # (b * S, T, D)
    repeated_ids, repeated_classes = np.repeat(ids, steps, 0), np.repeat(classes, steps)
    [gradients] = _gradients(
        lambda v: _class_logits(classifier, repeated_ids, repeated_classes, v), [path]
    )
    mean_gradient = _numpy(gradients).reshape(vectors.shape[:1] + (steps,) + path.shape[1:])
    mean_gradient = mean_gradient.mean(axis=1)  # (b, T, D)
    return np.sum(mean_gradient * (vectors[:, 0] - baseline[:, 0]), axis=-1)  # (b, T)


def _attention_gradient(classifier, ids, classes, pooling):
    shapes = []  # Of the weights the gates multiply: per local block with attention_block_size.
    outputs = _forward(
        classifier,
        ids,
        attention_weights_fn=lambda weights: shapes.append(weights.shape) or weights,
    )
    gates = [np.ones(shape, dtype=np.float32) for shape in shapes]

    def gated_logits(*gates):
        remaining = list(gates)
        return _class_logits(
            classifier,
            ids,
            classes,
            attention_weights_fn=lambda weights: weights * remaining.pop(0),
        )

    # The gradient with respect to a gate of ones is grad A * A, Chefer's product.
    products = [_numpy(g) for g in _gradients(gated_logits, gates)]
    length = outputs["attention_scores"][0].shape[-1]  # A
    products = _head_means(
        [
            np.maximum(
                product
                if product.shape[-1] == length
                # per local block -> (B, N, A, A)
                else _numpy(block_diagonal_scores(product, len(ids), length)),
                0.0,
            )
            for product in products
        ]
    )  # (B, L, 1, A, A): mean_h((grad A * A)+)
    query_index = 0 if pooling == "cls" else None

    def relevance(maps):
        rolled = np.eye(maps.shape[-1])
        for layer_products in maps:  # (1, A', A')
            rolled = rolled + layer_products[0] @ rolled
        return rollout_importance(rolled, query_index)

    return _per_example(classifier, ids, products, relevance)


def _leave_one_out(classifier, token_ids, classes, batch_size):
    full = class_probabilities(classifier, token_ids, classes, batch_size)  # (B,)
    rows, positions = np.nonzero(token_ids != 0)
    variants = token_ids[rows].copy()  # (R, T): one real token removed per row
    variants[np.arange(len(rows)), positions] = 0
    dropped = class_probabilities(classifier, variants, classes[rows], batch_size)  # (R,)
    scores = np.zeros(token_ids.shape, dtype=np.float64)
    scores[rows, positions] = full[rows] - dropped
    return scores


_METHODS = {
    "rollout": _rollout,
    "last_attention": _last_attention,
    "gradient_x_input": _gradient_x_input,
    "conservative_gradient_x_input": _conservative_gradient_x_input,
    "attention_gradient": _attention_gradient,
    "integrated_gradients": _integrated_gradients,
}


def _class_logits(classifier, ids, classes, vectors=None, **options):
    """The sum over the batch of each text's class logit: one scalar to differentiate."""
    logits = _forward(classifier, ids, vectors, **options)["logits"]  # (B, C)
    picked = ops.take_along_axis(logits, ops.expand_dims(ops.convert_to_tensor(classes), 1), axis=1)
    return ops.sum(picked)


def _forward(classifier, ids, vectors=None, **options):
    """The classifier's logits, probabilities and every block's attention, in inference."""
    return classifier(
        ops.convert_to_tensor(ids, "int64"),
        training=False,
        token_vectors=vectors,
        return_logits=True,
        return_attention_scores=True,
        **options,
    )


def _head_means(block_maps):
    """Each block's maps (B, N_l, A, A) averaged over its own heads: (B, L, 1, A, A). The
    attention methods read only that mean, and a pruned model's blocks keep different
    numbers of heads, so they are never stacked head by head."""
    return np.stack([_numpy(maps).mean(axis=1) for maps in block_maps], axis=1)[:, :, None]


def _per_example(classifier, ids, maps, importance_of):
    """Runs `importance_of` on each text's maps (L, N, A', A') over its real positions and
    lays the result out over its token ids (B, T), dropping a class token's position."""
    class_token = classifier.encoder.class_token is not None
    scores = np.zeros(ids.shape, dtype=np.float64)
    for row, (row_ids, row_maps) in enumerate(zip(ids, maps, strict=True)):
        real = real_positions(row_ids, class_token)  # (A,)
        importance = importance_of(row_maps[:, :, real][:, :, :, real])  # (A',)
        scores[row, row_ids != 0] = importance[1:] if class_token else importance
    return scores


def _gradients(function, inputs):
    """Gradients of the scalar `function(*inputs)` with respect to each input."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        inputs = [tf.convert_to_tensor(value) for value in inputs]
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            target = function(*inputs)
        return tape.gradient(target, inputs)
    if backend == "jax":
        import jax

        return jax.grad(lambda values: function(*values))([np.asarray(v) for v in inputs])
    if backend == "torch":
        import torch

        inputs = [torch.as_tensor(_numpy(value)).requires_grad_(True) for value in inputs]
        return torch.autograd.grad(function(*inputs), inputs)
    raise ValueError(
        f"Gradient attributions need TensorFlow, JAX or PyTorch. Received: backend={backend!r}"
    )


def _numpy(value):
    return (
        np.asarray(keras.ops.convert_to_numpy(value), dtype=np.float64)
        if not isinstance(value, np.ndarray)
        else value
    )


__all__ = ["METHODS", "attribute"]
