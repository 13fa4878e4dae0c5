"""Tiny checkpoints saved by Hugging Face `transformers` itself, and its encoders as the
reference our converted ones are checked against.

Each family's checkpoint is a randomly initialised `transformers` model (with its
pretraining heads, so the prefix and the unused heads are exercised, or the bare encoder),
saved with `save_pretrained` (model.safetensors), plus a WordPiece tokenizer.json made by
the `tokenizers` library (RoBERTa: a byte-level BPE trained by `tokenizers` on `BPE_CORPUS`,
saved by `transformers`' RobertaTokenizer as tokenizer.json, vocab.json and merges.txt;
XLM-RoBERTa: a SentencePiece Unigram trained by `sentencepiece` on `SPM_CORPUS`, as
sentencepiece.bpe.model, and the tokenizer.json `transformers`' XLMRobertaTokenizer makes
of it).
The reference hidden states are the same model's `last_hidden_state`, computed in float64.

Our ids are the checkpoint's with 0 and its padding id swapped (RoBERTa's `<pad>` is 1);
`checkpoint_ids` maps ours back, written here again so the check shares no code with it.
"""

import json
from pathlib import Path

import numpy as np
import sentencepiece
import torch
from tokenizers import ByteLevelBPETokenizer, Tokenizer
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
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaModel,
    RobertaTokenizer,
    XLMRobertaConfig,
    XLMRobertaForMaskedLM,
    XLMRobertaModel,
    XLMRobertaTokenizer,
)
from transformers.utils import logging as transformers_logging

from tests.models.bert_reference import TINY_VOCABULARY, write_tokenizer_json

# Quiet: its progress bars, and its load report listing the heads the base model leaves.
transformers_logging.set_verbosity_error()
transformers_logging.disable_progress_bar()

WIDTH, LAYERS, HEADS, INNER, POSITIONS = 32, 2, 4, 64, 64
# ELECTRA-small's shape in miniature: embeddings narrower than the blocks, projected.
ELECTRA_EMBEDDING = 16
# What the tiny byte-level BPE is trained on: accents, CJK, an emoji, contractions, digits
# and runs of whitespace, so that its merges cover them.
BPE_CORPUS = [
    "The film was very good!",
    "bad, bad plot; not a good movie's plot",
    "A café, playing: naïve résumé",
    "一 好 電影很好 😀",
    "don't you'll we've 1234567 numbers",
    "  spaces   here  \t and\nnewlines\n\n",
] * 3
BPE_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # fairseq's ids 0 to 3, then mask
# The tiny SentencePiece model's text: scripts, accents (composed and not), full-width and
# ligature forms its NFKC normaliser folds, an emoji, digits, long words.
SPM_CORPUS = [
    *BPE_CORPUS,
    "Der Film war sehr gut, wirklich schön und überraschend spannend.",
    "Le film était très bon, vraiment magnifique ; l'intrigue était naïve.",
    "El niño comió paella en España y la película fue buenísima.",
    "Фильм был очень хороший, но сюжет слабый.",
    "映画はとても良かった。物語は弱い。",
    "这部电影非常好，情节很弱。",
    "영화가 정말 좋았어요",
    "ﬁlm ＡＢＣ ① ½ e\u0301 cafe\u0301 😀😀 🎬",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "numbers 3.14 2024 1,000,000 and more numbers",
    "The acting was wonderful, the soundtrack memorable and the ending surprising.",
    "A boring, predictable story with terrible dialogue; I walked out halfway.",
    "Die Schauspieler waren großartig, aber die Handlung war vorhersehbar.",
    "Les acteurs étaient excellents, mais l'histoire était prévisible et ennuyeuse.",
    "Los actores fueron excelentes, pero la historia era predecible y aburrida.",
    "Gli attori erano bravissimi, ma la storia era prevedibile e noiosa.",
    "Os atores foram ótimos, mas a história era previsível e chata.",
    "Актёры играли прекрасно, но история была предсказуемой и скучной.",
    "俳優たちは素晴らしかったが、物語は予想通りで退屈だった。",
    "演员们很出色，但故事可以预见而且无聊。",
    "배우들은 훌륭했지만 이야기는 뻔하고 지루했다.",
    "Οι ηθοποιοί ήταν εξαιρετικοί, αλλά η ιστορία ήταν προβλέψιμη.",
    "השחקנים היו מצוינים אבל הסיפור היה צפוי ומשעמם",
    "الممثلون كانوا رائعين لكن القصة كانت متوقعة ومملة",
    "अभिनेता शानदार थे लेकिन कहानी उबाऊ थी",
] * 4


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
    if model_type in ("roberta", "xlm-roberta"):
        # Positions from pad_token_id + 1 = 2 on, as in roberta-base (514 for 512 tokens).
        settings = dict(
            **{**bert_sizes, "max_position_embeddings": POSITIONS + 2},
            type_vocab_size=1,
            pad_token_id=1,
            bos_token_id=0,
            eos_token_id=2,
            layer_norm_eps=1e-5,
        )
        if model_type == "roberta":
            return (RobertaForMaskedLM if head else RobertaModel)(RobertaConfig(**settings))
        return (XLMRobertaForMaskedLM if head else XLMRobertaModel)(XLMRobertaConfig(**settings))
    raise ValueError(f"no tiny {model_type} checkpoint")


def write_hf_checkpoint(folder, model_type, head=True, seed=0):
    """Saves a tiny random `model_type` checkpoint with `transformers`' `save_pretrained`
    and a tokenizer.json of `TINY_VOCABULARY`; returns the folder.

    The weights are redrawn on BERT-test scale (0.2, LayerNorm scales near 1): with
    `transformers`' 0.02 the states would hardly depend on the weights a converter maps.
    """
    folder = Path(folder)
    torch.manual_seed(seed)
    if model_type == "roberta":
        vocabulary_size = write_bpe_tokenizer(folder)
    elif model_type == "xlm-roberta":
        vocabulary_size = write_sentencepiece_tokenizer(folder)
    else:
        vocabulary_size = len(TINY_VOCABULARY)
        write_tokenizer_json(folder / "tokenizer.json", TINY_VOCABULARY)
    model = _model(model_type, head, vocabulary_size)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn_like(parameter)
            is_norm_scale = parameter.ndim == 1 and "norm" in name.lower() and "weight" in name
            parameter.copy_(1 + 0.1 * noise if is_norm_scale else 0.2 * noise)
    model.save_pretrained(folder)
    return folder


def write_bpe_tokenizer(folder, vocabulary_size=400) -> int:
    """A byte-level BPE trained by `tokenizers` on `BPE_CORPUS`, saved by `transformers`'
    RobertaTokenizer (tokenizer.json, vocab.json, merges.txt); returns its size."""
    trained = ByteLevelBPETokenizer()
    trained.train_from_iterator(
        BPE_CORPUS, vocab_size=vocabulary_size, min_frequency=1, special_tokens=BPE_SPECIALS
    )
    trained.save_model(str(folder))  # vocab.json, merges.txt
    vocabulary = json.loads((folder / "vocab.json").read_text())
    lines = (folder / "merges.txt").read_text().splitlines()
    merges = [tuple(line.split(" ")) for line in lines if line and not line.startswith("#")]
    RobertaTokenizer(vocab=vocabulary, merges=merges).save_pretrained(folder)
    return len(vocabulary)


def write_sentencepiece_tokenizer(folder, vocabulary_size=500) -> int:
    """A SentencePiece Unigram trained on `SPM_CORPUS` (sentencepiece.bpe.model, as in
    xlm-roberta-base's folder), and the tokenizer.json `transformers`' XLMRobertaTokenizer
    converts it into; returns the tokenizer's size (the pieces, <pad> and <mask>)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(SPM_CORPUS),
        model_prefix=str(folder / "spm"),
        vocab_size=vocabulary_size,
        model_type="unigram",
        character_coverage=0.995,  # Leaves the rarest characters unknown: <unk> is tested.
        hard_vocab_limit=False,
        minloglevel=2,
    )
    (folder / "spm.model").rename(folder / "sentencepiece.bpe.model")
    (folder / "spm.vocab").unlink()
    tokenizer = XLMRobertaTokenizer.from_pretrained(folder)
    tokenizer.save_pretrained(folder)  # tokenizer.json, tokenizer_config.json
    return len(tokenizer)


def padding_id(folder) -> int:
    """The checkpoint's padding id (config.json's pad_token_id; 0 for the BERT families)."""
    config = json.loads((Path(folder) / "config.json").read_text())
    fairseq = config["model_type"] in ("roberta", "xlm-roberta")
    return config.get("pad_token_id", 0) if fairseq else 0


def checkpoint_ids(folder, ids):
    """Our token ids (B, T) as the checkpoint's: 0 and its padding id swapped."""
    ids, padding = np.array(ids), padding_id(folder)
    swapped = ids.copy()
    swapped[ids == 0], swapped[ids == padding] = padding, 0
    return swapped


def reference_encoder(folder) -> PreTrainedModel:
    """The checkpoint's encoder (the pretraining model's base), float64, in eval mode."""
    model = _model_class(folder).from_pretrained(folder)
    return model.base_model.to(torch.float64).eval()


def _model_class(folder):
    model_type = json.loads((Path(folder) / "config.json").read_text())["model_type"]
    return {
        "bert": BertModel,
        "distilbert": DistilBertModel,
        "electra": ElectraModel,
        "roberta": RobertaModel,
        "xlm-roberta": XLMRobertaModel,
    }[model_type]


def reference_states(folder, token_ids, token_type_ids=None):
    """`last_hidden_state` (B, T, D) float64 of the checkpoint's encoder for our
    `token_ids` (B, T), 0 = padding; `token_type_ids` only for families that have them."""
    encoder = reference_encoder(folder)
    mask = torch.as_tensor(np.asarray(token_ids) != 0).long()
    token_ids = torch.as_tensor(checkpoint_ids(folder, token_ids))
    inputs = dict(input_ids=token_ids, attention_mask=mask)
    if token_type_ids is not None:
        inputs["token_type_ids"] = torch.as_tensor(np.asarray(token_type_ids))
    with torch.no_grad():
        return encoder(**inputs).last_hidden_state.numpy()


def reference_ids(folder, texts):
    """(ids, type ids), both (B, T) int arrays padded with the checkpoint's padding id: the
    `tokenizers` library's encoding of `texts` (strings, or (first, second) pairs) by the
    folder's tokenizer.json."""
    tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    padding = padding_id(folder)
    tokenizer.enable_padding(pad_id=padding, pad_token=tokenizer.id_to_token(padding))
    encodings = tokenizer.encode_batch(list(texts))
    return (
        np.array([encoding.ids for encoding in encodings]),
        np.array([encoding.type_ids for encoding in encodings]),
    )
