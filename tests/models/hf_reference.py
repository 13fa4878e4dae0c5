"""Tiny checkpoints saved by Hugging Face `transformers` itself, and its encoders as the
reference our converted ones are checked against.

Each family's checkpoint is a randomly initialised `transformers` model (with its
pretraining heads, so the prefix and the unused heads are exercised, or the bare encoder),
saved with `save_pretrained` (model.safetensors), plus a WordPiece tokenizer.json made by
the `tokenizers` library. The reference hidden states are the same model's
`last_hidden_state`, computed in float64.
"""

import json
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from transformers import (
    BertConfig,
    BertForPreTraining,
    BertModel,
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertModel,
    ElectraConfig,
    ElectraForPreTraining,
    ElectraModel,
    PreTrainedModel,
)
from transformers.utils import logging as transformers_logging

from tests.models.bert_reference import TINY_VOCABULARY, write_tokenizer_json

# Quiet: its progress bars, and its load report listing the heads the base model leaves.
transformers_logging.set_verbosity_error()
transformers_logging.disable_progress_bar()

WIDTH, LAYERS, HEADS, INNER, POSITIONS = 32, 2, 4, 64, 64
# ELECTRA-small's shape in miniature: embeddings narrower than the blocks, projected.
ELECTRA_EMBEDDING = 16


def _model(model_type, head, vocabulary_size):
    """A randomly initialised `transformers` model of the family: the pretraining model
    (encoder under its prefix, heads beside it) with `head`, else the bare encoder."""
    bert_sizes = dict(
        vocab_size=vocabulary_size,
        hidden_size=WIDTH,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=INNER,
        max_position_embeddings=POSITIONS,
    )
    if model_type == "bert":
        return (BertForPreTraining if head else BertModel)(BertConfig(**bert_sizes))
    if model_type == "electra":
        # The bare encoder keeps the blocks' width: no projection, the other layout.
        embedding_size = ELECTRA_EMBEDDING if head else WIDTH
        config = ElectraConfig(embedding_size=embedding_size, **bert_sizes)
        return (ElectraForPreTraining if head else ElectraModel)(config)
    if model_type == "distilbert":
        config = DistilBertConfig(
            vocab_size=vocabulary_size,
            dim=WIDTH,
            n_layers=LAYERS,
            n_heads=HEADS,
            hidden_dim=INNER,
            max_position_embeddings=POSITIONS,
        )
        return (DistilBertForMaskedLM if head else DistilBertModel)(config)
    raise ValueError(f"no tiny {model_type} checkpoint")


def write_hf_checkpoint(folder, model_type, head=True, seed=0):
    """Saves a tiny random `model_type` checkpoint with `transformers`' `save_pretrained`
    and a tokenizer.json of `TINY_VOCABULARY`; returns the folder.

    The weights are redrawn on BERT-test scale (0.2, LayerNorm scales near 1): with
    `transformers`' 0.02 the states would hardly depend on the weights a converter maps.
    """
    folder = Path(folder)
    torch.manual_seed(seed)
    model = _model(model_type, head, len(TINY_VOCABULARY))
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn_like(parameter)
            is_norm_scale = parameter.ndim == 1 and "norm" in name.lower() and "weight" in name
            parameter.copy_(1 + 0.1 * noise if is_norm_scale else 0.2 * noise)
    model.save_pretrained(folder)
    write_tokenizer_json(folder / "tokenizer.json", TINY_VOCABULARY)
    return folder


def reference_encoder(folder) -> PreTrainedModel:
    """The checkpoint's encoder (the pretraining model's base), float64, in eval mode."""
    model = _model_class(folder).from_pretrained(folder)
    return model.base_model.to(torch.float64).eval()


def _model_class(folder):
    model_type = json.loads((Path(folder) / "config.json").read_text())["model_type"]
    return {"bert": BertModel, "distilbert": DistilBertModel, "electra": ElectraModel}[model_type]


def reference_states(folder, token_ids, token_type_ids=None):
    """`last_hidden_state` (B, T, D) float64 of the checkpoint's encoder for `token_ids`
    (B, T), 0 = padding; `token_type_ids` only for families that have them."""
    encoder = reference_encoder(folder)
    token_ids = torch.as_tensor(np.asarray(token_ids))
    inputs = dict(input_ids=token_ids, attention_mask=(token_ids != 0).long())
    if token_type_ids is not None:
        inputs["token_type_ids"] = torch.as_tensor(np.asarray(token_type_ids))
    with torch.no_grad():
        return encoder(**inputs).last_hidden_state.numpy()


def reference_ids(folder, texts):
    """(ids, type ids), both (B, T) int arrays padded with 0: the `tokenizers` library's
    encoding of `texts` (strings, or (first, second) pairs) by the folder's tokenizer.json."""
    tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    encodings = tokenizer.encode_batch(list(texts))
    return (
        np.array([encoding.ids for encoding in encodings]),
        np.array([encoding.type_ids for encoding in encodings]),
    )
