"""The attention sibling of a classifier: same weights, also returns every block's scores.

Shapes: B batch, T query (sequence) length, N heads, D model size.
"""

import keras

from layers import TransformerEncoderBlock
from models.attention_probe import AttentionProbe
from models.transformer_classifier import PROBABILITIES, TOKEN_IDS


def build_attention_model(classifier):
    """Rewires `classifier`'s own layers into a model that also returns attention scores.

    The layers are reused, not copied, so the two models share weights: training or
    loading one changes the other. The classifier calls its blocks on the fast path (no
    scores); here each block is called through an `AttentionProbe`, which asks for them.
    Works on a freshly built classifier and on one taken out of a loaded end-to-end model
    (`get_model_parts`).

    Args:
        classifier: a model from `build_classifier`.

    Returns:
        A `keras.Model` mapping token ids `(B, T)` to
        `{"probabilities": (B, num_classes) float32,
          "attention_scores": [(B, N, T, T) float32 per block]}`,
        or `(B, N, T + 1, T + 1)` scores with `pooling: cls` (the class token is
        query/key 0).

    Example:

    >>> from config import ModelConfig
    >>> from models import build_classifier
    >>> config = ModelConfig(d_model=16, num_heads=2, num_layers=2, intermediate_dim=32)
    >>> classifier = build_classifier(config, 100, sequence_length=8, num_classes=3)
    >>> outputs = build_attention_model(classifier).output
    >>> [tuple(s.shape) for s in outputs["attention_scores"]]
    [(None, 2, 8, 8), (None, 2, 8, 8)]
    """
    token_ids = keras.Input(
        shape=classifier.inputs[0].shape[1:], dtype=classifier.inputs[0].dtype, name=TOKEN_IDS
    )
    x = token_ids
    attention_scores = []
    # The classifier is a chain; layers are in call order.
    for layer in classifier.layers:
        if isinstance(layer, keras.layers.InputLayer):
            continue
        if isinstance(layer, TransformerEncoderBlock):
            probe = AttentionProbe(layer, name=f"{layer.name}_probe")
            x, scores = probe(x)  # (B, T, D), (B, N, T, T); T + 1 with the class token
            attention_scores.append(scores)
        else:
            x = layer(x)
    if not attention_scores:
        raise ValueError(
            f"`classifier` has no TransformerEncoderBlock. Received: classifier={classifier.name!r}"
        )
    return keras.Model(
        token_ids,
        {PROBABILITIES: x, "attention_scores": attention_scores},
        name=f"{classifier.name}_with_attention",
    )
