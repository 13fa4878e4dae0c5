"""The attention sibling of a classifier: same weights, also returns every block's scores.

Shapes: B batch, T query (sequence) length, N heads, D model size.
"""

import keras

from layers import TransformerEncoderBlock
from models.attention_probe import AttentionProbe
from models.transformer_classifier import PROBABILITIES


def build_attention_model(classifier):
    """Rewires `classifier`'s own layers into a model that also returns attention scores.

    The layers are reused, not copied, so the two models share weights: training or
    loading one changes the other. The classifier calls its blocks on the fast path (no
    scores); here each block is called through an `AttentionProbe`, which asks for them.
    Works on any functional classifier holding `TransformerEncoderBlock`s (not only a
    chain of layers), freshly built or taken out of a loaded end-to-end model
    (`get_model_parts`). The blocks' scores come in the order Keras runs the graph.

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
    [(None, 2, None, None), (None, 2, None, None)]
    """
    attention_scores = []

    def call(layer, *args, **kwargs):
        if not isinstance(layer, TransformerEncoderBlock):
            return layer(*args, **kwargs)
        # Numbered: a block called twice in the graph gets two probes, each named once.
        probe = AttentionProbe(layer, name=f"{layer.name}_probe_{len(attention_scores)}")
        outputs, scores = probe(*args, **kwargs)
        attention_scores.append(scores)  # (B, N, T, T); T + 1 with the class token
        return outputs  # (B, T, D)

    # Keras replays the classifier's graph, whatever its shape, with the very same layer
    # objects (clone_function returns each layer itself) and calls each through `call`.
    rewired = keras.models.clone_model(
        classifier, clone_function=lambda layer: layer, call_function=call
    )
    if not attention_scores:
        raise ValueError(
            f"`classifier` has no TransformerEncoderBlock. Received: classifier={classifier.name!r}"
        )
    return keras.Model(
        rewired.inputs[0],
        {PROBABILITIES: rewired.outputs[0], "attention_scores": attention_scores},
        name=f"{classifier.name}_with_attention",
    )
