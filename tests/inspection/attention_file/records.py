"""What the attention file's tests share: the class names and one record of random
row-normalised maps (2 layers x 3 heads)."""

import numpy as np

from inspection.attention_file.record import AttentionRecord

CLASS_NAMES = ["negative", "positive"]


def make_record(example_id, num_tokens, true_label_index=1, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.random((2, 3, num_tokens, num_tokens)).astype("float32")
    scores /= scores.sum(axis=-1, keepdims=True)
    return AttentionRecord(
        example_id=example_id,
        text=" ".join(f"word{index}" for index in range(num_tokens)),
        tokens=[f"word{index}" for index in range(num_tokens)],
        attention_scores=scores,
        probabilities=np.array([0.3, 0.7], "float32"),
        predicted_label_index=1,
        true_label_index=true_label_index,
    )
