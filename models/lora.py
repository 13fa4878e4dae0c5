"""LoRA on the classifier's attention (Keras' `enable_lora`), and its adapter file.

Hu et al. (2021): the pretrained weights stay as loaded and each adapted projection learns a
low-rank change `A @ B`. Keras' `EinsumDense.enable_lora(rank)` gives each attention
projection the factors A (D, N, r) and B (r, H) for its (D, N, H) kernel (the query, key
and value), A (N, H, r) and B (r, D) for the output's (N, H, D); the kernel stops
training, and `model.save` writes the kernel with `A @ B` merged in, so `model.keras` loads
as a plain classifier.

The adapter file (`adapter.weights.h5`) holds what the run learned on top of its
checkpoint: per block and projection the factors of the kernel's change, and the weights
that trained besides (the head; a class token, which starts random). Each change is
factored again from the trained and the starting kernels (it has rank <= r), so the file
is right also after the best epoch was restored from a merged checkpoint.

Keras' BackupAndRestore saves merged kernels and, loading them, zeroes both factors: a
resumed run would then train nothing but the head (A = B = 0 has no gradient).
`LoraBackup` keeps the factors beside that backup and puts them back.
"""

import json
import os

import h5py
import keras
import numpy as np

from config import LORA_TARGETS

ADAPTER_FORMAT = 1


def enable_lora(classifier, rank, targets=("query", "value")):
    """Freezes the encoder's weights and adds LoRA factors of `rank` to each block's
    `targets` projections; the weights outside the encoder (the head) and a class token
    (which no checkpoint gives) keep training."""
    trained = {id(variable) for variable in _trained_besides(classifier)}
    for variable in classifier.encoder.weights:
        variable.trainable = id(variable) in trained
    for block in classifier.encoder.blocks:
        block.self_attention.enable_lora(rank, targets)


def starting_kernels(classifier, targets):
    """{(block, target): kernel} before training: what `save_adapter` measures changes from."""
    return {
        (index, target): _kernel(block, target).copy()
        for index, block in enumerate(classifier.encoder.blocks)
        for target in targets
    }


def save_adapter(classifier, start, rank, path):
    """Writes the adapter of `classifier`, trained with LoRA of `rank` from the kernels
    `start` (`starting_kernels`), to the `.weights.h5` file `path`."""
    targets = sorted({target for _, target in start}, key=LORA_TARGETS.index)
    with h5py.File(path, "w") as adapter:
        adapter.attrs.update(
            {"format": ADAPTER_FORMAT, "rank": rank, "targets": json.dumps(targets)}
        )
        for (index, target), kernel in start.items():
            change = _kernel(classifier.encoder.blocks[index], target) - kernel
            factor_a, factor_b = low_rank_factors(change, rank)
            adapter[f"blocks/{index}/{target}/lora_kernel_a"] = factor_a
            adapter[f"blocks/{index}/{target}/lora_kernel_b"] = factor_b
        for variable in _trained_besides(classifier):
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
            raise ValueError(
                f"{path} adapts {len(adapter['blocks'])} blocks; the classifier "
                f"has {len(classifier.encoder.blocks)}"
            )
        enable_lora(classifier, rank, targets)
        for index, block in enumerate(classifier.encoder.blocks):
            for target in targets:
                layer = getattr(block.self_attention, f"{target}_dense")
                # Keras scales A @ B by lora_alpha / rank, 1 by default, as the file's are.
                for name in ("lora_kernel_a", "lora_kernel_b"):
                    getattr(layer, name).assign(adapter[f"blocks/{index}/{target}/{name}"][()])
        for variable in _trained_besides(classifier):
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
    return (
        factor_a.reshape(*change.shape[:-1], rank).astype(np.float32),
        factor_b.astype(np.float32),
    )


class LoraBackup(keras.callbacks.Callback):
    """Keeps the LoRA factors at `path` with every epoch, beside BackupAndRestore's backup
    (which deletes the folder when training ends); on resume, puts each starting kernel
    (`starting_kernels`) and its factors back. Put it after BackupAndRestore, which sets
    the model's `_initial_epoch` when it restores.

    Should the run have stopped between the two backups, the factors are made again from
    the restored kernels (`low_rank_factors`): the same kernels, a fresh factoring."""

    def __init__(self, path, classifier, start):
        super().__init__()
        self.path, self.start = str(path), start
        blocks = classifier.encoder.blocks
        self.projections = {
            (index, target): getattr(blocks[index].self_attention, f"{target}_dense")
            for index, target in start
        }

    def on_train_begin(self, logs=None):
        epoch = getattr(self.model, "_initial_epoch", None)
        if not epoch:
            return  # a fresh run: nothing restored
        saved = np.load(self.path, allow_pickle=False) if os.path.exists(self.path) else None
        same_epoch = saved is not None and int(saved["epoch"]) == epoch
        for (index, target), layer in self.projections.items():
            kernel = self.start[(index, target)]
            if same_epoch:
                factor_a, factor_b = (saved[f"{index}/{target}/{ab}"] for ab in "ab")
            else:
                merged = np.asarray(layer._kernel, dtype=np.float32)
                factor_a, factor_b = low_rank_factors(merged - kernel, layer.lora_rank)
                factor_a = factor_a * layer.lora_rank / layer.lora_alpha
            layer._kernel.assign(kernel)
            layer.lora_kernel_a.assign(factor_a)
            layer.lora_kernel_b.assign(factor_b)

    def on_epoch_end(self, epoch, logs=None):
        factors = {
            f"{index}/{target}/{ab}": np.asarray(getattr(layer, f"lora_kernel_{ab}"))
            for (index, target), layer in self.projections.items()
            for ab in "ab"
        }
        staged = f"{self.path}.partial.npz"
        np.savez(staged, epoch=epoch + 1, **factors)
        os.replace(staged, self.path)


def _kernel(block, target):
    """The projection's kernel as it acts, LoRA's scaled `A @ B` included, in float32."""
    layer = getattr(block.self_attention, f"{target}_dense")
    kernel = np.asarray(layer._kernel, dtype=np.float32)
    if layer.lora_enabled:
        factors = np.asarray(layer.lora_kernel_a) @ np.asarray(layer.lora_kernel_b)
        kernel = kernel + layer.lora_alpha / layer.lora_rank * factors
    return kernel


def _trained_besides(classifier):
    """The weights a LoRA run trains besides the factors: those outside the encoder, and a
    class token's."""
    encoder = {id(variable) for variable in classifier.encoder.weights}
    token = classifier.encoder.class_token
    return [variable for variable in classifier.weights if id(variable) not in encoder] + (
        list(token.weights) if token is not None else []
    )
