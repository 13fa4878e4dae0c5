"""The classifier run layer by layer, with the hooks gradient attributions need.

The functional classifier runs its blocks on the fast path and hides its logits. Attribution
methods (`inspection.attribution`) need more: the predicted class's logit, every block's
attention weights, token vectors they can replace or differentiate, the attention weights
gated or held constant and the normalisations' scale held constant. This module replays
the classifier's own layers, found by the names `transformer_classifier` gives them, in the
order `build_classifier` calls them; `tests/models/test_explainable_forward.py` checks that
the probabilities equal the classifier's for every kind of classifier the builder makes.

Inference only: dropout is off and `TokenDropout` (training only) is skipped.

Shapes: B batch, T token ids, A attended positions (T, or T + 1 with the class token of a
word-level `pooling: cls` model), N heads, D model size, C classes.
"""

from keras import ops

from layers import TransformerEncoderBlock
from layers.norm_scale import layer_norm
from models.transformer_classifier import (
    CLASS_TOKEN,
    EMBEDDING,
    FINAL_NORM,
    HEAD_HIDDEN,
    POOLING,
    PROBABILITIES,
)


def token_vectors(classifier, token_ids):
    """The token embeddings (B, T, D) the classifier looks up for `token_ids`, before
    positions are added: the "input" of gradient x input and Integrated Gradients."""
    embedding = classifier.get_layer(EMBEDDING)
    return embedding.token_embedding(ops.convert_to_tensor(token_ids, "int64"))


def explainable_forward(classifier, token_ids, vectors=None, attention_weights_fn=None,
                        detach_norm_scale=False):
    """Runs `classifier` on token ids, returning its logits and every block's attention.

    Args:
        classifier: a model from `build_classifier` (freshly built or loaded).
        token_ids: int (B, T); id 0 is padding.
        vectors: optional float (B, T, D) token vectors replacing the looked-up ones
            (`token_vectors`); positions and the padding mask still come from the ids.
        attention_weights_fn: optional function given each block's post-softmax weights
            (B, N, A, A) before they mix the values; it must keep their values (a gate of
            ones, `ops.stop_gradient`).
        detach_norm_scale: no gradient through the LayerNorms' 1 / std (conservative
            propagation); the values do not change.

    Returns:
        `{"logits": (B, C), "probabilities": (B, C) float32,
          "attention_scores": [(B, N, A, A) float32 per block]}`.

    Example:

    >>> import numpy as np
    >>> from config import ModelConfig
    >>> from models import build_classifier
    >>> config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32)
    >>> classifier = build_classifier(config, 50, sequence_length=8, num_classes=3)
    >>> ids = np.array([[4, 7, 9, 0]])
    >>> outputs = explainable_forward(classifier, ids)
    >>> bool(np.allclose(outputs["probabilities"], classifier(ids), atol=1e-6))
    True
    """
    token_ids = ops.convert_to_tensor(token_ids, "int64")
    embedding = classifier.get_layer(EMBEDDING)
    x = embedding(token_ids, token_vectors=vectors, detach_norm_scale=detach_norm_scale)
    padding_mask = embedding.compute_mask(token_ids)  # (B, T) or None without mask_zero
    names = {layer.name for layer in classifier.layers}
    if CLASS_TOKEN in names:
        class_token = classifier.get_layer(CLASS_TOKEN)
        x, padding_mask = class_token(x), class_token.compute_mask(x, padding_mask)  # A = T + 1
    attention_scores = []
    # classifier.layers lists the blocks in the order the graph calls them.
    for block in [layer for layer in classifier.layers
                  if isinstance(layer, TransformerEncoderBlock)]:
        x, scores = block(x, padding_mask=padding_mask, return_attention_scores=True,
                          attention_weights_fn=attention_weights_fn,
                          detach_norm_scale=detach_norm_scale)  # (B, A, D), (B, N, A, A)
        attention_scores.append(scores)
    if FINAL_NORM in names:
        x = layer_norm(classifier.get_layer(FINAL_NORM), x, detach_norm_scale)
    x = classifier.get_layer(POOLING)(x, mask=padding_mask)  # (B, D)
    if HEAD_HIDDEN in names:
        x = classifier.get_layer(HEAD_HIDDEN)(x)
    head = classifier.get_layer(PROBABILITIES)
    # The head's Dense without its softmax: attributions explain the logit, which does not
    # saturate the way a probability of 0.999 does.
    logits = ops.matmul(ops.cast(x, "float32"), ops.cast(head.kernel, "float32"))
    logits = logits + ops.cast(head.bias, "float32")  # (B, C)
    return {
        "logits": logits,
        PROBABILITIES: ops.softmax(logits, axis=-1),
        "attention_scores": attention_scores,
    }

