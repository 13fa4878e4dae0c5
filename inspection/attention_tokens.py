"""From an attention model's raw outputs to per-example maps over real tokens only.

The one place that knows how padding (id 0) and the class token of `pooling: cls` sit in
the attention maps; the export, predict's explanations and the TensorBoard callback all
go through it. Which word each token belongs to is `token_schemes`'.

Letter legend: B batch, T tokens (the padded length in a batch; once trimmed, one
example's real tokens), A attended positions (T, or T + 1 with a class token), L layers,
N heads.
"""

import keras
import numpy as np

from inspection.token_schemes import WORD_LEVEL, token_scheme
from inspection.word_pieces import CLASS_TOKEN, PADDING_ID

# Examples per forward pass of an attention model: its scores are (B, L, N, A, A)
# float32, 64 MiB for 32 examples of 256 tokens with 2 layers of 4 heads, 144 MiB with
# MiniLM's 6 x 12 at 128 tokens (576 MiB at 256).
ATTENTION_BATCH_SIZE = 32


def stack_block_scores(outputs, kept_heads=None):
    """Every block's scores from an attention model's outputs as one array (B, L, N, A, A).

    A pruned model's blocks keep different numbers of heads (`models.pruning`): each
    block's heads go to their original numbers, `kept_heads[layer]` (a run's
    compress.json), and a removed head's maps stay all 0. N is one more than the largest
    number, so the array lines up with the unpruned model's heads and its heads.json.

    Args:
        outputs: the model's outputs, "attention_scores" one (B, N_l, A, A) per block.
        kept_heads: per block, the original numbers of its heads, in order; None: each
            block's heads numbered from 0.

    Example:
    >>> outputs = {"attention_scores": [np.ones((2, 4, 3, 3)), np.ones((2, 4, 3, 3))]}
    >>> stack_block_scores(outputs).shape
    (2, 2, 4, 3, 3)
    >>> pruned = {"attention_scores": [np.ones((1, 1, 2, 2)), np.ones((1, 2, 2, 2))]}
    >>> stack_block_scores(pruned, kept_heads=[[1], [0, 2]])[0, :, :, 0, 0].tolist()
    [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    """
    blocks = [
        keras.ops.convert_to_numpy(scores).astype(np.float32)
        for scores in outputs["attention_scores"]
    ]  # each (B, N_l, A, A)
    kept_heads = check_kept_heads(kept_heads, [block.shape[1] for block in blocks])
    num_heads = 1 + max((max(heads) for heads in kept_heads if heads), default=-1)
    batch, _, length, _ = blocks[0].shape
    stacked = np.zeros((batch, len(blocks), num_heads, length, length), np.float32)
    for layer, (block, heads) in enumerate(zip(blocks, kept_heads, strict=True)):
        stacked[:, layer, heads] = block
    return stacked  # (B, L, N, A, A)


def check_kept_heads(kept_heads, head_counts):
    """`kept_heads` as lists of ints, checked against the heads each block has; None: every
    block's heads numbered from 0.

    Example:
    >>> check_kept_heads(None, [2, 1]), check_kept_heads([[0, 3], [1]], [2, 1])
    ([[0, 1], [0]], [[0, 3], [1]])
    """
    if kept_heads is None:
        return [list(range(count)) for count in head_counts]
    kept_heads = [[int(head) for head in heads] for heads in kept_heads]
    if [len(heads) for heads in kept_heads] != list(head_counts) or any(
        heads != sorted(set(heads)) or min(heads, default=0) < 0 for heads in kept_heads
    ):
        raise ValueError(
            f"kept_heads must give each block's heads their original numbers, increasing "
            f"and from 0: one per head of its {list(head_counts)} heads per block. "
            f"Received: kept_heads={kept_heads}"
        )
    return kept_heads


def has_class_token(pooling, vocabulary):
    """Whether the attention maps have a learned class token at position 0, before the ids.

    A word-level classifier with `pooling: cls` prepends one (`layers.ClassToken`). A
    checkpoint's text already starts with its own ("[CLS]", "<s>"), which that pooling
    reads: no position is added.

    Example:
    >>> has_class_token("cls", ["", "[UNK]", "film"]), has_class_token("cls", ["[PAD]", "[CLS]"])
    (True, False)
    """
    return pooling == "cls" and token_scheme(vocabulary) is WORD_LEVEL


def trimmed_to_longest(token_ids):
    """Cuts the columns after the last real token of any row: (B, T) -> (B, T'), at least
    one column. Sorted by length, most batches of a split get short.

    Example:
    >>> trimmed_to_longest(np.array([[5, 0, 0], [6, 7, 0]])).tolist()
    [[5, 0], [6, 7]]
    """
    token_ids = np.asarray(token_ids)
    real = np.flatnonzero(np.any(token_ids != PADDING_ID, axis=0))
    return token_ids[:, : real[-1] + 1 if len(real) else 1]


def shortest_first(token_ids, indices=None):
    """The rows of `token_ids` (B, T) (or the given `indices` of them) in order of their
    number of real tokens, shortest first, ties in their given order: batches cut by
    `trimmed_to_longest` then hold rows of similar length.

    Example:
    >>> shortest_first(np.array([[5, 6, 0], [7, 0, 0], [8, 9, 0]])).tolist()
    [1, 0, 2]
    >>> shortest_first(np.array([[5, 6, 0], [7, 0, 0], [8, 9, 0]]), [2, 0]).tolist()
    [2, 0]
    """
    token_ids = np.asarray(token_ids)
    rows = np.arange(len(token_ids)) if indices is None else np.asarray(indices, np.int64)
    lengths = np.count_nonzero(token_ids[rows] != PADDING_ID, axis=1)
    return rows[np.argsort(lengths, kind="stable")]


def real_positions(token_ids, class_token):
    """Boolean (A,) over the attended positions of one example: True for real tokens.

    Example:
    >>> real_positions(np.array([7, 9, 0]), class_token=True).tolist()
    [True, True, True, False]
    """
    is_real = np.asarray(token_ids) != PADDING_ID  # (T,)
    if class_token:
        is_real = np.concatenate([[True], is_real])  # (T + 1,)
    return is_real


def real_tokens(token_ids, vocabulary, class_token):
    """The token strings of one example's real positions, "[CLS]" first when present.

    Example:
    >>> real_tokens(np.array([2, 3, 0]), ["", "[UNK]", "good", "film"], class_token=True)
    ['[CLS]', 'good', 'film']
    """
    token_ids = np.asarray(token_ids)
    tokens = [
        str(vocabulary[token_id])
        for token_id in token_ids[real_positions(token_ids, class_token=False)]
    ]
    return [CLASS_TOKEN] + tokens if class_token else tokens


def trim_scores(scores, token_ids, class_token):
    """One example's maps (L, N, A, A) cut to its real positions (class token included).

    Example:
    >>> scores = np.arange(9.0).reshape(1, 1, 3, 3)
    >>> trim_scores(scores, np.array([4, 5, 0]), class_token=False)[0, 0].tolist()
    [[0.0, 1.0], [3.0, 4.0]]
    """
    is_real = real_positions(token_ids, class_token)
    return scores[:, :, is_real][:, :, :, is_real]
