"""The checkpoint families whose encoders load into our layers, one `Family` object each.

config.json's `model_type` picks the family (`family_of`). A family says how its config
keys read into a `checkpoints.Checkpoint`'s architecture, the prefix a pretraining model
puts before its encoder's tensors, and the names of those tensors, which
`checkpoint_weights.weight_table` maps onto our embedding and blocks. Every family here is
a post-norm encoder with learned absolute positions and exact GELU; they differ in names,
token types, (ELECTRA) a projection after the embedding, and (RoBERTa, XLM-RoBERTa) a
padding that is not id 0, positions that start after it (`convert`), and their tokenizers:
byte-level BPE, and (XLM-RoBERTa) SentencePiece Unigram with fairseq's ids.
keras-hub's converters (keras_hub/src/utils/transformers/convert_*.py) name the same
tensors.
"""

import dataclasses
from collections.abc import Callable

import numpy as np

from runtime.errors import DataError

# Block tensor roles, in our layers' order: the attention's projections, its output and
# LayerNorm, the feed-forward's two Dense layers and their LayerNorm. Each name is a
# torch module: its tensors are NAME.weight and NAME.bias.
BLOCK_ROLES = (
    "query",
    "key",
    "value",
    "attention_output",
    "attention_norm",
    "intermediate",
    "output",
    "output_norm",
)


@dataclasses.dataclass(frozen=True, eq=False)  # One object per family: compared by identity.
class Family:
    """How one `model_type` names and shapes its encoder.

    Attributes:
        model_type: config.json's `model_type`.
        title: the family's name in messages ("BERT").
        description: what loads, for the error that lists the families.
        prefix: what a pretraining model (BertForPreTraining, ...) puts before the encoder's
            tensors; stripped when present.
        architecture: (config.json as a dict, the folder) -> the `Checkpoint` fields of
            the encoder's shape; raises DataError on a setting our layers do not compute.
        embedding: tensor module names of the embedding: `word`, `position`, `norm`, and
            `token_type` and `projection` or None where the family has none.
        block_prefix: block i's tensors start with f"{block_prefix}{i}.".
        block: a module name per `BLOCK_ROLES` role, after the block's prefix.
        unused: prefixes of the tensors known and left unused (heads, buffers).
        tokenizer: "WordPiece", "ByteLevelBPE" or "SentencePiece", the kind of tokenizer
            files it comes with (`tokenizer_files`).
        convert: (tensors by name, the checkpoint's padding id) -> the tensors as a BERT
            layout with our ids would hold them; None where they already are.
    """

    model_type: str
    title: str
    description: str
    prefix: str
    architecture: Callable[[dict, object], dict]
    embedding: dict
    block_prefix: str
    block: dict
    unused: tuple
    tokenizer: str = "WordPiece"
    convert: Callable[[dict, int], dict] | None = None

    def block_tensor(self, index: int, role: str) -> str:
        """The module name of block `index`'s `role` ("encoder.layer.0.attention.self.query")."""
        return f"{self.block_prefix}{index}.{self.block[role]}"


def _key(config, where, key):
    if key not in config:
        raise DataError(
            f"model.pretrained: {where}/config.json has no {key!r}, which a "
            f"{config.get('model_type')} checkpoint's config.json holds; re-save the checkpoint "
            "with its own library"
        )
    return config[key]


def _supported(config, where, key, supported):
    if config.get(key) not in supported:
        raise DataError(
            f"model.pretrained: {where}: {key}={config.get(key)!r} is not "
            f"supported (only {supported[0]})"
        )


def _bert_architecture(config, where):
    _supported(config, where, "hidden_act", ("gelu",))
    _supported(config, where, "position_embedding_type", ("absolute", None))
    return dict(
        num_layers=_key(config, where, "num_hidden_layers"),
        d_model=_key(config, where, "hidden_size"),
        num_heads=_key(config, where, "num_attention_heads"),
        intermediate_dim=_key(config, where, "intermediate_size"),
        max_positions=_key(config, where, "max_position_embeddings"),
        num_token_types=config.get("type_vocab_size", 2),
        layer_norm_epsilon=config.get("layer_norm_eps", 1e-12),
    )


def _electra_architecture(config, where):
    architecture = _bert_architecture(config, where)
    # ELECTRA-small embeds in 128 and runs its blocks at 256: a Dense between them.
    width = config.get("embedding_size", architecture["d_model"])
    if width != architecture["d_model"]:
        architecture["embedding_dim"] = width
    return architecture


def _distilbert_architecture(config, where):
    _supported(config, where, "activation", ("gelu",))
    # sinusoidal_pos_embds only initialises the position table: the trained table is in
    # model.safetensors either way, and loads as learned positions.
    return dict(
        num_layers=_key(config, where, "n_layers"),
        d_model=_key(config, where, "dim"),
        num_heads=_key(config, where, "n_heads"),
        intermediate_dim=_key(config, where, "hidden_dim"),
        max_positions=_key(config, where, "max_position_embeddings"),
        num_token_types=0,  # DistilBERT dropped BERT's segment embedding.
        layer_norm_epsilon=1e-12,  # Fixed in its code, not in config.json.
    )


def _roberta_architecture(config, where):
    architecture = _bert_architecture(config, where)
    padding_id = _key(config, where, "pad_token_id")
    # Position ids start after the padding id (fairseq's convention): the rows before it
    # are never read, so a text has that many positions fewer.
    architecture["max_positions"] -= padding_id + 1
    # Its tokenizer types every token 0: `_roberta_tensors` folds that row into positions.
    architecture["num_token_types"] = 0
    return dict(architecture, padding_id=padding_id)


def token_order(size: int, padding_id: int) -> np.ndarray:
    """The checkpoint's token id of each of our ids: ids 0 and `padding_id` swapped.

    Everything here (masks, trimming, `PaddingMask`, `mask_zero`) reads id 0 as padding;
    RoBERTa's vocabulary has `<s>` there and `<pad>` at 1. Swapping the two in the
    vocabulary and in the word-embedding rows makes padding 0 with the same vectors per
    token; the swap is its own inverse, so it also maps our ids back to the checkpoint's.

    Example:
    >>> token_order(5, 1).tolist()
    [1, 0, 2, 3, 4]
    """
    order = np.arange(size)
    order[[0, padding_id]] = order[[padding_id, 0]]
    return order


def _roberta_tensors(tensors, padding_id):
    """RoBERTa's embedding tensors as our embedding (no token types) takes them."""
    names = [f"embeddings.{name}_embeddings.weight" for name in ("word", "position", "token_type")]
    if not all(name in tensors for name in names):  # Reported as missing by the caller.
        return tensors
    tensors = dict(tensors)
    word = tensors["embeddings.word_embeddings.weight"]
    tensors["embeddings.word_embeddings.weight"] = word[token_order(len(word), padding_id)]
    position = tensors["embeddings.position_embeddings.weight"]
    # Every token is type 0: its row is added to each token's vector, as to each position's.
    token_type = tensors.pop("embeddings.token_type_embeddings.weight")[0]
    tensors["embeddings.position_embeddings.weight"] = position[padding_id + 1 :] + token_type
    return tensors


BERT_EMBEDDING = {
    "word": "embeddings.word_embeddings",
    "position": "embeddings.position_embeddings",
    "token_type": "embeddings.token_type_embeddings",
    "norm": "embeddings.LayerNorm",
    "projection": None,
}
BERT_BLOCK = {
    "query": "attention.self.query",
    "key": "attention.self.key",
    "value": "attention.self.value",
    "attention_output": "attention.output.dense",
    "attention_norm": "attention.output.LayerNorm",
    "intermediate": "intermediate.dense",
    "output": "output.dense",
    "output_norm": "output.LayerNorm",
}

BERT = Family(
    model_type="bert",
    title="BERT",
    description="BERT, and the encoders sentence-transformers saves (MiniLM)",
    prefix="bert.",
    architecture=_bert_architecture,
    embedding=BERT_EMBEDDING,
    block_prefix="encoder.layer.",
    block=BERT_BLOCK,
    unused=("pooler.", "cls.", "embeddings.position_ids"),
)
DISTILBERT = Family(
    model_type="distilbert",
    title="DistilBERT",
    description="DistilBERT (no token types)",
    prefix="distilbert.",
    architecture=_distilbert_architecture,
    embedding={**BERT_EMBEDDING, "token_type": None},
    block_prefix="transformer.layer.",
    block={
        "query": "attention.q_lin",
        "key": "attention.k_lin",
        "value": "attention.v_lin",
        "attention_output": "attention.out_lin",
        "attention_norm": "sa_layer_norm",
        "intermediate": "ffn.lin1",
        "output": "ffn.lin2",
        "output_norm": "output_layer_norm",
    },
    # DistilBertForMaskedLM's and ...ForSequenceClassification's heads.
    unused=(
        "vocab_transform.",
        "vocab_layer_norm.",
        "vocab_projector.",
        "pre_classifier.",
        "classifier.",
        "embeddings.position_ids",
    ),
)
ELECTRA = Family(
    model_type="electra",
    title="ELECTRA",
    description="ELECTRA's discriminator (its embeddings projected when narrower)",
    prefix="electra.",
    architecture=_electra_architecture,
    embedding={**BERT_EMBEDDING, "projection": "embeddings_project"},
    block_prefix="encoder.layer.",
    block=BERT_BLOCK,
    unused=("discriminator_predictions.", "embeddings.position_ids"),
)

ROBERTA = Family(
    model_type="roberta",
    title="RoBERTa",
    description="RoBERTa (byte-level BPE; its one token type folded into the positions)",
    prefix="roberta.",
    architecture=_roberta_architecture,
    embedding={**BERT_EMBEDDING, "token_type": None},
    block_prefix="encoder.layer.",
    block=BERT_BLOCK,
    # RobertaForMaskedLM's head, RobertaModel's pooler, ...ForSequenceClassification's head.
    unused=("lm_head.", "pooler.", "classifier.", "embeddings.position_ids"),
    tokenizer="ByteLevelBPE",
    convert=_roberta_tensors,
)

# RoBERTa's layout, ids and positions with a multilingual SentencePiece vocabulary.
XLM_ROBERTA = dataclasses.replace(
    ROBERTA,
    model_type="xlm-roberta",
    title="XLM-RoBERTa",
    description="XLM-RoBERTa (RoBERTa's layout; SentencePiece Unigram, fairseq's ids)",
    tokenizer="SentencePiece",
)

# config.json's model_type -> its family.
LOADED_FAMILIES = {
    family.model_type: family for family in (BERT, DISTILBERT, ELECTRA, ROBERTA, XLM_ROBERTA)
}


def family_of(config: dict, where) -> Family:
    """The family of a checkpoint's config.json (read from `where`); another model_type is
    a DataError listing the families that load."""
    model_type = config.get("model_type")
    if model_type not in LOADED_FAMILIES:
        families = "; ".join(
            f"{name}: {family.description}" for name, family in LOADED_FAMILIES.items()
        )
        raise DataError(
            f"model.pretrained: {where} is a {model_type!r} model; the families that load "
            f"into our layers (config.json's model_type) are {families}"
        )
    return LOADED_FAMILIES[model_type]
