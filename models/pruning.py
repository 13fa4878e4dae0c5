"""Attention heads removed for real: their query, key, value and output kernels sliced.

Shapes: D model size, N heads, H head size.
"""

import numpy as np

from models.text_encoder import TextEncoder
from models.transformer_classifier import TransformerClassifier


def pruned_classifier(classifier, heads):
    """A new `TransformerClassifier` without `heads`, (layer, head) pairs counted from 0.

    Its blocks keep different numbers of heads; each head keeps its size, so the output
    projection still gives D values. Its probabilities are those of `classifier` called
    with a head mask that is 0 on `heads` (tested within 1e-5).

    Raises:
        ValueError: a pair is no head of the model, or every head of a block would go
            (the model needs one per block).
    """
    encoder = classifier.encoder
    counts = encoder.head_counts
    heads = {(int(layer), int(head)) for layer, head in heads}
    for layer, head in sorted(heads):
        if not (0 <= layer < len(counts) and 0 <= head < counts[layer]):
            raise ValueError(
                f"head ({layer}, {head}) is not in the model: it has "
                f"{len(counts)} blocks of {counts} heads"
            )
    kept = kept_heads(counts, heads)
    for layer, remaining in enumerate(kept):
        if not remaining:
            raise ValueError(
                f"pruning every head of block {layer} leaves it no attention; "
                "keep at least one head per block"
            )
    config = encoder.get_config()
    config.update(
        num_heads=[len(remaining) for remaining in kept],
        key_dim=encoder.blocks[0].self_attention._head_dim,
    )
    new_encoder = TextEncoder.from_config(config)
    new = TransformerClassifier(
        new_encoder,
        classifier.num_classes,
        pooling=classifier.pooling_mode,
        head_hidden_dim=classifier.head_hidden_dim,
        dropout=classifier.dropout,
        token_dropout=classifier.token_dropout_rate,
        name=classifier.name,
        dtype=classifier.dtype_policy,
    )
    new.build((None, None))
    pairs = [(encoder.embedding, new_encoder.embedding), (classifier.head, new.head)]
    pairs += [
        (old, ours)
        for old, ours in [
            (encoder.class_token, new_encoder.class_token),
            (encoder.final_norm, new_encoder.final_norm),
            (classifier.head_hidden, new.head_hidden),
        ]
        if old is not None
    ]
    for source, target in pairs:
        target.set_weights(source.get_weights())
    for block, new_block, remaining in zip(encoder.blocks, new_encoder.blocks, kept, strict=True):
        for name in ("feed_forward", "attention_norm", "feed_forward_norm"):
            getattr(new_block, name).set_weights(getattr(block, name).get_weights())
        _slice_heads(block.self_attention, new_block.self_attention, np.array(remaining))
    return new


def kept_heads(counts, pruned):
    """Per block, the original numbers of the heads not in `pruned` ((layer, head) pairs).

    Example:
    >>> kept_heads([3, 2], [(0, 1), (1, 0)])
    [[0, 2], [1]]
    """
    pruned = set(pruned)
    return [
        [head for head in range(count) if (layer, head) not in pruned]
        for layer, count in enumerate(counts)
    ]


def _slice_heads(attention, new_attention, kept):
    for projection in ("query", "key", "value", "output"):
        old, new = (getattr(layer, f"{projection}_dense") for layer in (attention, new_attention))
        # (D, N, H) and (N, H) for the query, key and value; (N, H, D) and (D,) for the output.
        new.kernel.assign(
            old.kernel.numpy()[kept] if projection == "output" else old.kernel.numpy()[:, kept]
        )
        if old.bias is not None:
            new.bias.assign(old.bias.numpy() if projection == "output" else old.bias.numpy()[kept])
