"""What `export_attention` checks of its inputs: the labels, the classifier's outputs and
the rows of its maps. Each check raises a ValueError that names what was received.

Letter legend: B batch, T token ids, A attended positions (T + 1 with a class token),
L layers, N heads, C classes.
"""

import keras
import numpy as np

from inspection.attention_tokens import stack_block_scores
from inspection.methods.forward_passes import attention_forward

# Rows over real keys sum to 1 up to float32 rounding, for up to a few thousand keys.
ROW_SUM_TOLERANCE = 1e-3


def run_classifier(classifier, token_ids, num_classes, class_token, kept_heads):
    """One forward pass of the classifier: its probabilities (B, C) float32 and every
    block's maps (B, L, N, A, A), checked against the contract of `export_attention`; each
    block's heads at their original numbers `kept_heads` (`stack_block_scores`)."""
    outputs = attention_forward(classifier, token_ids)
    probabilities = keras.ops.convert_to_numpy(outputs["probabilities"]).astype(np.float32)
    batch, length = token_ids.shape
    length += int(class_token)
    if probabilities.shape != (batch, num_classes):
        raise ValueError(
            f"The classifier's probabilities must have shape ({batch}, {num_classes}), one "
            f"column per class name. Received: shape={probabilities.shape}"
        )
    for layer_index, scores in enumerate(outputs["attention_scores"]):
        shape = tuple(keras.ops.shape(scores))
        if len(shape) != 4 or shape[0] != batch or shape[2:] != (length, length):
            hint = ""
            if len(shape) == 4 and shape[2] == length + 1 and not class_token:
                hint = " The scores have one extra position: pass pooling='cls'."
            raise ValueError(
                f"attention_scores[{layer_index}] must have shape ({batch}, num_heads, {length}, "
                f"{length}). Received: shape={shape}.{hint}"
            )
    return probabilities, stack_block_scores(outputs, kept_heads)  # (B, L, N, A, A)


def check_rows(scores, example_id, kept_heads):
    """A ValueError unless every row of the heads the model has, `kept_heads` (per layer
    their numbers), in one example's maps (L, N, T, T) sums to 1."""
    if scores.shape[-1] == 0:
        return
    row_sums = np.concatenate(
        [scores[layer, heads].sum(axis=-1) for layer, heads in enumerate(kept_heads)]
    )  # (kept heads, T)
    worst = float(np.abs(row_sums - 1.0).max())
    if worst > ROW_SUM_TOLERANCE:
        raise ValueError(
            f"Attention rows of example {example_id!r} sum to {1 + worst:.4f} or "
            f"{1 - worst:.4f} over real tokens instead of 1: the classifier must give padded "
            "keys (token id 0) exactly zero weight."
        )


def label_indices(true_labels, class_names, num_examples):
    """The true labels (indices or names) as indices into `class_names`; None: all unknown."""
    if true_labels is None:
        return [None] * num_examples
    true_labels = list(true_labels)
    if len(true_labels) != num_examples:
        raise ValueError(
            f"true_labels needs one label per text ({num_examples}). "
            f"Received: {len(true_labels)} labels"
        )
    indices = []
    for label in true_labels:
        if isinstance(label, (str, bytes)):
            name = label.decode() if isinstance(label, bytes) else label
            if name not in class_names:
                raise ValueError(f"true label {name!r} is not in class_names={class_names}.")
            indices.append(class_names.index(name))
        else:
            index = int(label)
            if not 0 <= index < len(class_names):
                raise ValueError(
                    f"true label index {index} is outside 0..{len(class_names) - 1} "
                    f"for class_names={class_names}."
                )
            indices.append(index)
    return indices
