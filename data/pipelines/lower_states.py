"""The states of a model's frozen lower blocks, computed once per text and reused.

A pretrained encoder whose lower blocks do not train (`model.fine_tune: top_blocks`) gives each
text the same states there in every epoch: they are computed in one pass, as the first
epoch reads them, and kept for every later epoch and validation, in memory or, past a
budget, in files. Letter legend: B batch, T token ids, A positions (T, or T + 1 with a
class token), D model size.
"""

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import tensorflow as tf

# Texts per call of the lower blocks: big enough for fast matrix products.
STATES_BATCH = 64
# Texts read at a time and sorted by length, so that each call pads little (in the split's
# order, Rotten Tomatoes' batches padded to 64 took 82 s against 29 s sorted), then given
# back in their order.
SORT_CHUNK = 1024


@dataclasses.dataclass
class LowerStates:
    """What `make_pipelines` needs to put the lower blocks' states beside the token ids.

    compute: token ids int64 (B, T) -> states (B, A, D), the frozen part of the model.
    folder: where the states go when they exceed `memory_mb` (emptied first: files
        of an interrupted run are not trusted).
    memory_mb: the most megabytes kept in memory per split.
    """

    compute: object
    folder: Path | None = None
    memory_mb: float = 4096


def with_lower_states(dataset, lower_states, split):
    """`dataset` of (token ids (T,), label) -> ((token ids (T,), states (A, D)), label),
    the states computed by `lower_states.compute` on the first pass and cached; a third
    element (the text's position, `make_pipelines(positions=True)`) passes through.

    Example:
    >>> ids = tf.data.Dataset.from_tensor_slices(([[3, 4], [5, 0]], [1, 0]))
    >>> double = LowerStates(lambda ids: tf.cast(ids, tf.float32)[:, :, None] * 2)
    >>> [(i.tolist(), s[:, 0].tolist(), int(y)) for (i, s), y in
    ...  with_lower_states(ids, double, "train").as_numpy_iterator()]
    [([3, 4], [6.0, 8.0], 1), ([5, 0], [10.0, 0.0], 0)]
    """
    probe = tf.convert_to_tensor(lower_states.compute(tf.ones((1, 2), tf.int64)))  # (1, A, D)
    width, dtype = int(probe.shape[-1]), probe.dtype
    extra = int(probe.shape[1]) - 2  # 1 with a class token
    with_lengths = dataset.map(lambda token_ids, *rest: (token_ids, tf.shape(token_ids)[0], *rest))
    extra_specs = dataset.element_spec[1:]  # the label, and a position if there is one

    def generate():
        for token_ids, lengths, *rest in with_lengths.padded_batch(SORT_CHUNK):
            token_ids, lengths = token_ids.numpy(), lengths.numpy()  # (C, T), (C,)
            states = [None] * len(lengths)
            by_length = np.argsort(lengths, kind="stable")
            for start in range(0, len(by_length), STATES_BATCH):
                rows = by_length[start : start + STATES_BATCH]
                computed = np.asarray(
                    lower_states.compute(token_ids[rows, : lengths[rows].max()])
                )  # (b, A, D)
                for row, state in zip(rows, computed):
                    states[row] = state[: lengths[row] + extra]
            rest = [column.numpy() for column in rest]
            for row, (ids, state, length) in enumerate(zip(token_ids, states, lengths)):
                yield (ids[:length], state), *(column[row] for column in rest)

    states = tf.data.Dataset.from_generator(
        generate,
        output_signature=(
            (tf.TensorSpec((None,), tf.int64), tf.TensorSpec((None, width), dtype)),
            *(tf.TensorSpec(spec.shape, spec.dtype) for spec in extra_specs),
        ),
    )
    return states.cache(_cache_file(with_lengths, lower_states, split, width, dtype, extra))


def _cache_file(with_lengths, lower_states, split, width, dtype, extra):
    """'' (memory) when the split's states fit `memory_mb`, else a fresh file path."""
    lengths = with_lengths.map(lambda token_ids, length, *rest: length).batch(1024)
    positions = sum(int(chunk.sum()) + extra * len(chunk) for chunk in lengths.as_numpy_iterator())
    megabytes = positions * width * dtype.size / 2**20
    if lower_states.folder is None or megabytes <= lower_states.memory_mb:
        return ""
    folder = Path(lower_states.folder) / split
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    print(f"{split}: the frozen blocks' states ({megabytes:,.1f} MB) are kept in {folder}")
    return str(folder / "states")
