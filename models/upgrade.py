"""Run folders written by earlier versions: their weights and classifier brought up to date
by `upgrade_run.py`; the loaders only recognise them (`is_old_model_file`,
`is_old_encoder_file`) and name that command (`OutdatedFileError`).

Until 2026-12 `model.keras` held the classifier as a functional graph of the same layers
(`TokenAndPositionEmbedding`, `ClassToken`, the `TransformerEncoderBlock`s, a final
`LayerNormalization`, `SequencePooling`, `Dense`). Those layers still load; this module
reads their settings and weights into a `TransformerClassifier` that predicts the same.

Until issue 35 `MultiHeadAttention` held its eight projection weights itself; they now sit
in Keras' `EinsumDense` sublayers (`query_dense`, ...), with the same shapes and order.
`upgraded_weights_copy` moves them in a copy of an old `.keras` or `.weights.h5` file.
"""

import io
import shutil
import zipfile
from pathlib import Path

import h5py
import keras

from layers import TokenAndPositionEmbedding, TokenDropout, TransformerEncoderBlock
from layers.class_token import ClassToken
from layers.sequence_pooling import SequencePooling
from models.text_encoder import TextEncoder
from models.transformer_classifier import TransformerClassifier


class OutdatedFileError(ValueError):
    """A file saved by an earlier version of this project; the one-line message names the
    command that rewrites its run folder (`config.earlier_version_message`)."""


def is_old_model_file(path):
    """Whether the `.keras` file `path` holds attention weights of the old layout (False
    for a file that is not a Keras archive: Keras' own error says more)."""
    try:
        with zipfile.ZipFile(path) as archive:
            buffer = io.BytesIO(archive.read("model.weights.h5"))
        with h5py.File(buffer, "r") as weights:
            return bool(_old_attention_groups(weights))
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


def is_old_functional_classifier(model):
    """Whether the loaded end-to-end `model` holds a functional classifier of before 2026-12
    (a Keras `Model` of `TransformerEncoderBlock`s) instead of a `TransformerClassifier`."""
    return (
        not any(isinstance(layer, TransformerClassifier) for layer in model.layers)
        and isinstance(model.layers[-1], keras.Model)
        and any(isinstance(layer, TransformerEncoderBlock) for layer in model.layers[-1].layers)
    )


def is_old_encoder_file(path):
    """Whether the `encoder.weights.h5` of a pretrain.py run is keyed by the old functional
    graph (its blocks at the top) or holds attention weights of the old layout."""
    try:
        with h5py.File(path, "r") as weights:
            return "transformer_encoder_block" in weights.get("layers", {}) or bool(
                _old_attention_groups(weights)
            )
    except OSError:
        return False


def upgraded_classifier(old):
    """A `TransformerClassifier` with the settings and weights of an old functional one.

    Raises:
        ValueError: `old` is not a classifier this project saved.
    """

    def of_kind(kind):
        return [layer for layer in old.layers if isinstance(layer, kind)]

    embeddings, blocks, poolings = (
        of_kind(TokenAndPositionEmbedding),
        of_kind(TransformerEncoderBlock),
        of_kind(SequencePooling),
    )
    dense = of_kind(keras.layers.Dense)  # [head hidden,] output
    if len(embeddings) != 1 or not blocks or len(poolings) != 1 or not 1 <= len(dense) <= 2:
        raise ValueError(
            f"{old.name!r} is not a classifier saved by this project; retrain it with train.py"
        )
    embedding, block, output = embeddings[0].get_config(), blocks[0].get_config(), dense[-1]
    encoder = TextEncoder(
        vocabulary_size=embedding["vocabulary_size"],
        sequence_length=embedding["sequence_length"],
        d_model=embedding["embedding_dim"],
        num_heads=block["num_heads"],
        num_layers=len(blocks),
        intermediate_dim=block["intermediate_dim"],
        key_dim=blocks[0].self_attention.key_dim,
        dropout=block["dropout"],
        attention_dropout=block["attention_dropout"],
        activation=block["activation"],
        norm_first=block["norm_first"],
        layer_norm_epsilon=block["layer_norm_epsilon"],
        attention_block_size=block["attention_block_size"],
        positional_encoding=embedding["positional_encoding"],
        mask_zero=embedding["mask_zero"],
        num_token_types=embedding["num_token_types"],
        embedding_norm_epsilon=embedding["layer_norm_epsilon"],
        class_token=bool(of_kind(ClassToken)),
        name="encoder",
    )
    token_dropouts = of_kind(TokenDropout)
    classifier = TransformerClassifier(
        encoder,
        output.units,
        pooling=poolings[0].pooling,
        head_hidden_dim=dense[0].units if len(dense) == 2 else 0,
        dropout=block["dropout"],
        token_dropout=token_dropouts[0].rate if token_dropouts else 0.0,
        name=old.name,
    )
    classifier.build((None, None))
    pairs = [
        (embeddings[0], encoder.embedding),
        *zip(blocks, encoder.blocks, strict=True),
        *zip(of_kind(ClassToken), [encoder.class_token] if encoder.class_token else []),
        *zip(
            of_kind(keras.layers.LayerNormalization),
            [encoder.final_norm] if encoder.final_norm else [],
        ),
        (output, classifier.head),
    ]
    if len(dense) == 2:
        pairs.append((dense[0], classifier.head_hidden))
    for source, target in pairs:
        target.set_weights(source.get_weights())
    return classifier


_PROJECTIONS = ("query_dense", "key_dense", "value_dense", "output_dense")


def upgraded_weights_copy(path, folder):
    """A copy of the `.keras` or `.weights.h5` file `path` in `folder` with every
    `MultiHeadAttention` of the old layout moved to its projection sublayers, or None when
    the file holds none (it is up to date, or not ours)."""
    path, target = Path(path), Path(folder) / Path(path).name
    if path.suffix != ".keras":
        shutil.copyfile(path, target)
        with h5py.File(target, "r+") as weights:
            return target if _move_attention_weights(weights) else None
    with zipfile.ZipFile(path) as archive:
        buffer = io.BytesIO(archive.read("model.weights.h5"))
        with h5py.File(buffer, "r+") as weights:
            if not _move_attention_weights(weights):
                return None
        with zipfile.ZipFile(target, "w") as copy:
            for item in archive.infolist():
                data = (
                    buffer.getvalue()
                    if item.filename == "model.weights.h5"
                    else (archive.read(item.filename))
                )
                copy.writestr(item, data)
    return target


def _old_attention_groups(weights):
    """The names of the attention groups of the old layout in the open h5 file `weights`."""

    def is_old_attention(name, group):
        old = group.get("vars") if isinstance(group, h5py.Group) else None
        return (
            old is not None
            and len(old) in (4, 8)
            and "query_dense" not in group
            and old["0"].ndim == 3
            and old[str(len(old) // 4 * 3)].ndim == 3
        )

    found = []
    weights.visititems(
        lambda name, item: found.append(name) if is_old_attention(name, item) else None
    )
    return found


def _move_attention_weights(weights):
    """Moves each old attention group's `vars/0..7` (kernel and bias of the query, key, value
    and output; `0..3` without biases) to `query_dense/vars/0..1`, ...; returns how many."""
    found = _old_attention_groups(weights)
    for name in found:
        group = weights[name]
        values = [group["vars"][str(index)][()] for index in range(len(group["vars"]))]
        del group["vars"]
        group.create_group("vars")
        per_projection = len(values) // 4  # kernel and bias, or the kernel alone
        for number, projection in enumerate(_PROJECTIONS):
            target = group.create_group(f"{projection}/vars")
            for index in range(per_projection):
                target.create_dataset(str(index), data=values[number * per_projection + index])
    return len(found)
