"""LoRA on the classifier's attention (Keras' `enable_lora`), and its adapter file.

Hu et al. (2021): the pretrained weights stay as loaded and each adapted projection learns a
low-rank change `A @ B`. Keras' `EinsumDense.enable_lora(rank)` gives each attention
projection (kernel (D, N, H), or (N, H, D) for the output) the factors A (D, N, r) and
B (r, H); the kernel stops training, and `model.save` writes the kernel with `A @ B` merged
in, so `model.keras` loads as a plain classifier.

The adapter file (`adapter.weights.h5`) holds what the run learned on top of its
checkpoint: per block and projection the factors of the kernel's change, and the weights
outside the encoder (the head). Each change is factored again from the trained and the
starting kernels (it has rank <= r), so the file is right also after the best epoch was
restored from a merged checkpoint, or the run resumed.
"""

import json

import h5py
import numpy as np

ADAPTER_FORMAT = 1


def enable_lora(classifier, rank, targets=("query", "value")):
    """Freezes every encoder weight and adds LoRA factors of `rank` to each block's
    `targets` projections; the weights outside the encoder (the head) keep training."""
    for variable in classifier.encoder.weights:
        variable.trainable = False
    for block in classifier.encoder.blocks:
        block.self_attention.enable_lora(rank, targets)


def starting_kernels(classifier, targets):
    """{(block, target): kernel} before training: what `save_adapter` measures changes from."""
    return {(index, target): _kernel(block, target).copy()
            for index, block in enumerate(classifier.encoder.blocks) for target in targets}


def save_adapter(classifier, start, rank, path):
    """Writes the adapter of `classifier`, trained with LoRA of `rank` from the kernels
    `start` (`starting_kernels`), to the `.weights.h5` file `path`."""
    targets = sorted({target for _, target in start}, key=["query", "key", "value",
                                                           "output"].index)
    with h5py.File(path, "w") as adapter:
        adapter.attrs.update({"format": ADAPTER_FORMAT, "rank": rank,
                              "targets": json.dumps(targets)})
        for (index, target), kernel in start.items():
            change = _kernel(classifier.encoder.blocks[index], target) - kernel
            factor_a, factor_b = low_rank_factors(change, rank)
            adapter[f"blocks/{index}/{target}/lora_kernel_a"] = factor_a
            adapter[f"blocks/{index}/{target}/lora_kernel_b"] = factor_b
        for variable in _outside_encoder(classifier):
            adapter[f"outside/{variable.path}"] = np.asarray(variable)


def load_adapter(classifier, path):
    """Puts the adapter file `path` on `classifier`, built with the run's config and its
    checkpoint's weights: LoRA enabled with the file's rank and targets, the factors and
    the head's weights assigned. Returns the rank.

    Raises:
        ValueError: the file is not an adapter, or does not fit `classifier`.
    """
    with h5py.File(path, "r") as adapter:
        if adapter.attrs.get("format") != ADAPTER_FORMAT:
            raise ValueError(f"{path} is not an adapter file written by train.py")
        rank, targets = int(adapter.attrs["rank"]), json.loads(adapter.attrs["targets"])
        if len(adapter["blocks"]) != len(classifier.encoder.blocks):
            raise ValueError(f"{path} adapts {len(adapter['blocks'])} blocks; the classifier "
                             f"has {len(classifier.encoder.blocks)}")
        enable_lora(classifier, rank, targets)
        for index, block in enumerate(classifier.encoder.blocks):
            for target in targets:
                layer = getattr(block.self_attention, f"{target}_dense")
                for name in ("lora_kernel_a", "lora_kernel_b"):
                    getattr(layer, name).assign(adapter[f"blocks/{index}/{target}/{name}"][()])
                # Keras scales A @ B by lora_alpha / rank; the file's factors are unscaled.
                layer.lora_alpha = rank
        for variable in _outside_encoder(classifier):
            variable.assign(adapter[f"outside/{variable.path}"][()])
    return rank


def low_rank_factors(change, rank):
    """A (..., r) and B (r, last) with `A @ B == change` (up to float32 rounding), for a
    change of rank <= r as a (prod(leading), last) matrix, in Keras' LoRA layout.

    >>> change = np.outer(np.arange(6.0), np.arange(3.0)).reshape(2, 3, 3)
    >>> a, b = low_rank_factors(change, 2)
    >>> a.shape, b.shape, bool(np.allclose(a @ b, change))
    ((2, 3, 2), (2, 3), True)
    """
    matrix = change.reshape(-1, change.shape[-1]).astype(np.float64)
    left, singular, right = np.linalg.svd(matrix, full_matrices=False)
    kept = min(rank, len(singular))
    factor_a = np.zeros((matrix.shape[0], rank))
    factor_b = np.zeros((rank, matrix.shape[1]))
    factor_a[:, :kept] = left[:, :kept] * singular[:kept]
    factor_b[:kept] = right[:kept]
    return (factor_a.reshape(*change.shape[:-1], rank).astype(np.float32),
            factor_b.astype(np.float32))


def _kernel(block, target):
    """The projection's kernel as it acts: LoRA's `A @ B` included."""
    return np.asarray(getattr(block.self_attention, f"{target}_dense").kernel)


def _outside_encoder(classifier):
    encoder = {id(variable) for variable in classifier.encoder.weights}
    return [variable for variable in classifier.weights if id(variable) not in encoder]
