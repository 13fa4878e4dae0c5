"""A tiny BERT checkpoint in the Hugging Face layout, and BERT in float64 numpy to check ours.

The numpy BERT follows the published architecture (Devlin et al., 2019; Hugging Face's
`BertModel`) term by term and shares no code with `layers/` or `models/`.
"""

import json
import math
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

# Enough WordPiece tokens to spell the tests' texts; "##" pieces continue a word.
TINY_VOCABULARY = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "a",
    "good",
    "bad",
    "film",
    "the",
    "was",
    "not",
    "!",
    ".",
    ",",
    "'",
    "s",
    "##s",
    "##ing",
    "act",
    "cafe",
    "play",
    "##ed",
    "very",
    "movie",
    "plot",
    "一",
    "好",
]


def write_tiny_checkpoint(
    folder,
    num_layers=2,
    d_model=16,
    num_heads=2,
    intermediate_dim=32,
    max_positions=64,
    seed=0,
    tokenizer_file=True,
    prefix="",
):
    """Writes config.json, model.safetensors and tokenizer.json (or vocab.txt); returns
    the folder. Weights are random, on BERT's scale."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)

    def normal(*shape, scale=0.2):
        return (rng.standard_normal(shape) * scale).astype("float32")

    d, inner = d_model, intermediate_dim
    tensors = {
        "embeddings.word_embeddings.weight": normal(len(TINY_VOCABULARY), d),
        "embeddings.position_embeddings.weight": normal(max_positions, d),
        "embeddings.token_type_embeddings.weight": normal(2, d),
        "embeddings.LayerNorm.weight": 1 + normal(d, scale=0.1),
        "embeddings.LayerNorm.bias": normal(d, scale=0.1),
        "embeddings.position_ids": np.arange(max_positions, dtype="int64")[None],
        "pooler.dense.weight": normal(d, d),
        "pooler.dense.bias": normal(d),
    }
    for index in range(num_layers):
        p = f"encoder.layer.{index}."
        for name in ("query", "key", "value"):
            tensors[p + f"attention.self.{name}.weight"] = normal(d, d, scale=0.4)
            tensors[p + f"attention.self.{name}.bias"] = normal(d)
        tensors |= {
            p + "attention.output.dense.weight": normal(d, d),
            p + "attention.output.dense.bias": normal(d),
            p + "attention.output.LayerNorm.weight": 1 + normal(d, scale=0.1),
            p + "attention.output.LayerNorm.bias": normal(d, scale=0.1),
            p + "intermediate.dense.weight": normal(inner, d),
            p + "intermediate.dense.bias": normal(inner),
            p + "output.dense.weight": normal(d, inner),
            p + "output.dense.bias": normal(d),
            p + "output.LayerNorm.weight": 1 + normal(d, scale=0.1),
            p + "output.LayerNorm.bias": normal(d, scale=0.1),
        }
    save_file(
        {prefix + name: value for name, value in tensors.items()}, str(folder / "model.safetensors")
    )
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_size": d,
        "intermediate_size": inner,
        "num_attention_heads": num_heads,
        "num_hidden_layers": num_layers,
        "max_position_embeddings": max_positions,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
        "vocab_size": len(TINY_VOCABULARY),
        "position_embedding_type": "absolute",
        "pad_token_id": 0,
    }
    (folder / "config.json").write_text(json.dumps(config))
    if tokenizer_file:
        write_tokenizer_json(folder / "tokenizer.json", TINY_VOCABULARY)
    else:
        (folder / "vocab.txt").write_text("\n".join(TINY_VOCABULARY) + "\n")
        (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": True}))
    return folder


def write_tokenizer_json(path, vocabulary):
    """A BERT tokenizer.json made by the `tokenizers` library itself."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    tokenizer = Tokenizer(
        WordPiece({token: i for i, token in enumerate(vocabulary)}, unk_token="[UNK]")
    )
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer.save(str(path))


def _layer_norm(x, weight, bias, epsilon=1e-12):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * weight + bias


def _gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def numpy_bert(tensors, num_heads, token_ids, num_layers=None, epsilon=1e-12):
    """Hidden states (B, T, D) float64 of BERT for `token_ids` (B, T), 0 = padding."""
    t = {name: np.asarray(value, dtype="float64") for name, value in tensors.items()}
    token_ids = np.asarray(token_ids)
    length = token_ids.shape[1]
    x = (
        t["embeddings.word_embeddings.weight"][token_ids]
        + t["embeddings.position_embeddings.weight"][:length]
        + t["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], epsilon)
    key_is_real = (token_ids != 0)[:, None, None, :]  # (B, 1, 1, T)
    layers = (
        num_layers
        if num_layers is not None
        else len({name.split(".")[2] for name in t if name.startswith("encoder.layer.")})
    )
    for index in range(layers):
        p = f"encoder.layer.{index}."

        def dense(inputs, name, p=p):
            return inputs @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        def heads(inputs):  # (B, T, D) -> (B, N, T, H)
            batch, steps, width = inputs.shape
            return inputs.reshape(batch, steps, num_heads, width // num_heads).transpose(0, 2, 1, 3)

        q, k, v = (heads(dense(x, f"attention.self.{name}")) for name in ("query", "key", "value"))
        logits = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])
        logits = np.where(key_is_real, logits, -np.inf)
        weights = np.exp(logits - logits.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        attended = (weights @ v).transpose(0, 2, 1, 3).reshape(x.shape)
        x = _layer_norm(
            x + dense(attended, "attention.output.dense"),
            t[p + "attention.output.LayerNorm.weight"],
            t[p + "attention.output.LayerNorm.bias"],
            epsilon,
        )
        hidden = _gelu(dense(x, "intermediate.dense"))
        x = _layer_norm(
            x + dense(hidden, "output.dense"),
            t[p + "output.LayerNorm.weight"],
            t[p + "output.LayerNorm.bias"],
            epsilon,
        )
    return x
