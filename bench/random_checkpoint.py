"""Randomly initialised Hugging Face checkpoint folders, to bench a family without a download.

`write_random_checkpoint` builds the family's pretraining model with `transformers` (so the
tensors carry the `bert.`, `distilbert.` or `roberta.` prefix that keras-hub's converters
look for), redraws its weights, saves it with `save_pretrained` (config.json,
model.safetensors) and writes tokenizer files our reader accepts: a vocab.txt for the
WordPiece families, a byte-level BPE trained by `tokenizers` and saved by `transformers`'
RobertaTokenizer for RoBERTa. The vocabulary spells `words` (the bench's sentences) and is
filled with unused tokens up to the size's vocabulary, which sets the embedding's size.

`transformers` is a bench and test dependency, never the runtime's: only the bench imports
this module. tests/models/hf_reference.py writes the tests' fixed tiny checkpoints with
the library the same way; this one takes the shape from `SIZES`.
"""

import json
import re
from pathlib import Path

# torch, tokenizers and transformers are imported in the functions that write: the bench
# reads `SIZES` for its command line and loads them only for a random checkpoint.

# layers, width, heads, feed-forward width, positions, vocabulary per family (None: just
# the tokens `words` need), and the scale the weights are drawn at. `base` is
# bert-base-uncased's, distilbert-base-uncased's (6 layers) and roberta-base's shape, with
# `transformers`' own 0.02; `tiny` is the tests', whose 0.2 keeps the states dependent on
# every weight at width 32 (at 0.02 they would be little more than the LayerNorm biases).
SIZES = {
    "tiny": dict(layers=2, width=32, heads=4, inner=64, positions=64, scale=0.2, vocabulary={}),
    "base": dict(
        layers=12,
        width=768,
        heads=12,
        inner=3072,
        positions=512,
        scale=0.02,
        vocabulary={"bert": 30522, "distilbert": 30522, "roberta": 50265},
    ),
}
DISTILBERT_LAYERS = {"base": 6}  # distilbert-base halves BERT's depth
WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BPE_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # fairseq's ids 0 to 3, then mask
ROBERTA_PADDING_ID = 1


def write_random_checkpoint(folder, model_type, size, words, seed=0):
    """Writes a random `model_type` checkpoint of shape `SIZES[size]` into `folder`, its
    tokenizer spelling the strings `words`; returns the folder."""
    import torch
    from transformers.utils import logging as transformers_logging

    # Quiet: its progress bars, and its notes on the heads the base model leaves.
    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()
    folder, shape = Path(folder), SIZES[size]
    folder.mkdir(parents=True, exist_ok=True)
    wanted = shape["vocabulary"].get(model_type)
    if model_type == "roberta":
        vocabulary_size = _write_bpe_tokenizer(folder, words, wanted)
    else:
        vocabulary_size = _write_word_piece(folder, words, wanted)
    torch.manual_seed(seed)
    model = _model(model_type, shape, DISTILBERT_LAYERS.get(size), vocabulary_size)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn_like(parameter)
            is_norm_scale = parameter.ndim == 1 and "norm" in name.lower() and "weight" in name
            parameter.copy_(1 + 0.1 * noise if is_norm_scale else shape["scale"] * noise)
        if model_type == "roberta":
            # RoBERTa has no token types: its published checkpoints hold a zero row there
            # (Hugging Face's fairseq converter zeroes it), which keras-hub's converter
            # relies on by not loading it. Ours folds the row into the positions either way.
            model.roberta.embeddings.token_type_embeddings.weight.zero_()
    model.save_pretrained(folder)
    return folder


def _model(model_type, shape, distilbert_layers, vocabulary_size):
    """The family's pretraining model (encoder under its prefix), randomly initialised."""
    from transformers import (
        BertConfig,
        BertForPreTraining,
        DistilBertConfig,
        DistilBertForMaskedLM,
        RobertaConfig,
        RobertaForMaskedLM,
    )

    sizes = dict(
        vocab_size=vocabulary_size,
        hidden_size=shape["width"],
        num_hidden_layers=shape["layers"],
        num_attention_heads=shape["heads"],
        intermediate_size=shape["inner"],
        max_position_embeddings=shape["positions"],
    )
    if model_type == "bert":
        return BertForPreTraining(BertConfig(**sizes))
    if model_type == "distilbert":
        config = DistilBertConfig(
            vocab_size=vocabulary_size,
            dim=shape["width"],
            n_layers=distilbert_layers or shape["layers"],
            n_heads=shape["heads"],
            hidden_dim=shape["inner"],
            max_position_embeddings=shape["positions"],
        )
        return DistilBertForMaskedLM(config)
    if model_type == "roberta":
        # Positions start after the padding id, as in roberta-base (514 for 512 tokens).
        config = RobertaConfig(
            **{**sizes, "max_position_embeddings": shape["positions"] + ROBERTA_PADDING_ID + 1},
            type_vocab_size=1,
            pad_token_id=ROBERTA_PADDING_ID,
            bos_token_id=0,
            eos_token_id=2,
            layer_norm_eps=1e-5,
        )
        return RobertaForMaskedLM(config)
    raise ValueError(f"no random {model_type} checkpoint; families: bert, distilbert, roberta")


def _filled(tokens, wanted, filler):
    """`tokens`, then `filler(i)` tokens up to `wanted` in all (None: no filling)."""
    if wanted is not None and wanted < len(tokens):
        raise ValueError(f"{len(tokens)} tokens do not fit a vocabulary of {wanted}")
    return tokens + [filler(i) for i in range((wanted or len(tokens)) - len(tokens))]


def _write_word_piece(folder, words, wanted):
    """vocab.txt: the specials, every lowercased word and punctuation mark of `words` (as
    BERT's basic tokenizer splits them), then [unusedN]; returns its size."""
    pieces = sorted({piece for text in words for piece in re.findall(r"\w+|[^\w\s]", text.lower())})
    vocabulary = _filled(WORDPIECE_SPECIALS + pieces, wanted, lambda i: f"[unused{i}]")
    (folder / "vocab.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    return len(vocabulary)


def _write_bpe_tokenizer(folder, words, wanted):
    """A byte-level BPE trained by `tokenizers` on `words`, filled with tokens no merge
    makes, saved by `transformers`' RobertaTokenizer (tokenizer.json, vocab.json,
    merges.txt); returns its size."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizer

    trained = ByteLevelBPETokenizer()
    trained.train_from_iterator(
        list(words), vocab_size=1000, min_frequency=1, special_tokens=BPE_SPECIALS
    )
    trained.save_model(str(folder))  # vocab.json, merges.txt
    ids = json.loads((folder / "vocab.json").read_text())
    lines = (folder / "merges.txt").read_text().splitlines()
    merges = [tuple(line.split(" ")) for line in lines if line and not line.startswith("#")]
    tokens = _filled(sorted(ids, key=ids.get), wanted, lambda i: f"<unused{i}>")
    RobertaTokenizer(
        vocab={token: i for i, token in enumerate(tokens)}, merges=merges
    ).save_pretrained(folder)
    return len(tokens)
