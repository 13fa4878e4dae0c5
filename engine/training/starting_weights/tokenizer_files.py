"""A checkpoint's tokenizer files, read into the vocabulary (in the checkpoint's id order)
and the options of our tokenizer layer for its family: WordPiece (BERT, DistilBERT,
ELECTRA) from tokenizer.json or vocab.txt, byte-level BPE (RoBERTa) from tokenizer.json or
vocab.json and merges.txt, SentencePiece Unigram (XLM-RoBERTa) from tokenizer.json or
sentencepiece.bpe.model. Which family a folder is, is config.json's (`families`)."""

import base64
import json

from engine.training.starting_weights.sentencepiece_model import (
    CONTROL,
    NORMAL,
    UNKNOWN,
    ProtoError,
    model_from_unigram,
    read_pieces,
)
from runtime.errors import DataError

# fairseq's first ids, before the SentencePiece pieces (shifted by one: `<pad>` is added),
# and its mask token after them: XLM-RoBERTa's vocabulary.
FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
FAIRSEQ_MASK = "<mask>"

# Either file set holds a family's tokenizer (tokenizer.json first).
TOKENIZER_FILES = {
    "WordPiece": ("vocab.txt",),
    "ByteLevelBPE": ("vocab.json", "merges.txt"),
    "SentencePiece": ("sentencepiece.bpe.model",),
}


def has_tokenizer(folder) -> bool:
    """Whether the folder holds tokenizer files of some family."""
    return (folder / "tokenizer.json").is_file() or any(
        all((folder / name).is_file() for name in names) for names in TOKENIZER_FILES.values()
    )


def read_json(path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"model.pretrained: {path} is unreadable ({error})") from None


def read_tokenizer(folder, kind):
    """(vocabulary in id order, our tokenizer layer's options) of a `kind` tokenizer."""
    if kind == "ByteLevelBPE":
        return _read_byte_level_bpe(folder)
    if kind == "SentencePiece":
        return _read_sentencepiece(folder)
    return _read_word_piece(folder)


def _read_word_piece(folder):
    if (folder / "tokenizer.json").is_file():
        tokenizer = read_json(folder / "tokenizer.json")
        model, normalizer = tokenizer.get("model") or {}, tokenizer.get("normalizer") or {}
        if model.get("type") != "WordPiece" or normalizer.get("type") != "BertNormalizer":
            raise DataError(
                f"model.pretrained: {folder}/tokenizer.json is not a BERT WordPiece "
                f"tokenizer (model {model.get('type')}, normalizer "
                f"{normalizer.get('type')})"
            )
        ids = model["vocab"]  # {token: id}
        vocabulary = sorted(ids, key=ids.get)
        options = dict(
            lowercase=normalizer.get("lowercase", True),
            strip_accents=normalizer.get("strip_accents"),
            split_cjk=normalizer.get("handle_chinese_chars", True),
        )
    else:
        _check_files(folder, "WordPiece")
        lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
        vocabulary = [line.rstrip("\r") for line in lines]
        settings = {}
        if (folder / "tokenizer_config.json").is_file():
            settings = read_json(folder / "tokenizer_config.json")
        options = dict(
            lowercase=settings.get("do_lower_case", True),
            strip_accents=settings.get("strip_accents"),
            split_cjk=settings.get("tokenize_chinese_chars", True),
        )
    return vocabulary, options


def _read_byte_level_bpe(folder):
    if (folder / "tokenizer.json").is_file():
        tokenizer = read_json(folder / "tokenizer.json")
        model = tokenizer.get("model") or {}
        pre_tokenizer = tokenizer.get("pre_tokenizer") or {}
        if (
            model.get("type") != "BPE"
            or pre_tokenizer.get("type") != "ByteLevel"
            or tokenizer.get("normalizer")
        ):
            raise DataError(
                f"model.pretrained: {folder}/tokenizer.json is not a byte-level BPE "
                f"tokenizer without a normalizer (model {model.get('type')}, pre_tokenizer "
                f"{pre_tokenizer.get('type')}, normalizer {tokenizer.get('normalizer')})"
            )
        if pre_tokenizer.get("add_prefix_space"):
            raise DataError(
                f"model.pretrained: {folder}/tokenizer.json adds a prefix space, which "
                "RoBERTa's tokenizer does not; save the tokenizer with add_prefix_space=False"
            )
        ids, merges = model["vocab"], model.get("merges") or []
        # Newer files hold each merge as a [left, right] list, older ones as "left right".
        merges = [merge if isinstance(merge, str) else " ".join(merge) for merge in merges]
    else:
        _check_files(folder, "ByteLevelBPE")
        ids = read_json(folder / "vocab.json")
        lines = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
        merges = [line for line in lines if line and not line.startswith("#version")]
    return sorted(ids, key=ids.get), dict(merges=tuple(merges))


def _read_sentencepiece(folder):
    """fairseq's vocabulary around the Unigram pieces, and the SentencePiece model's bytes
    (`sentencepiece`) that our tokenizer layer runs."""
    if (folder / "tokenizer.json").is_file():
        return _read_unigram_json(folder)
    _check_files(folder, "SentencePiece")
    path = folder / "sentencepiece.bpe.model"
    proto = path.read_bytes()
    try:
        pieces, model_type = read_pieces(proto)
    except (ProtoError, UnicodeDecodeError, KeyError) as error:
        raise DataError(f"model.pretrained: {path} is no SentencePiece model ({error})") from None
    kinds = [kind for _, _, kind in pieces[:3]]
    if model_type != "Unigram" or kinds != [UNKNOWN, CONTROL, CONTROL]:
        raise DataError(
            f"model.pretrained: {path} is a {model_type} model with pieces "
            f"{[piece for piece, _, _ in pieces[:3]]} first; XLM-RoBERTa's is a Unigram model "
            "with <unk>, <s>, </s> first: save the checkpoint's own tokenizer"
        )
    vocabulary = [*FAIRSEQ_SPECIALS, *(piece for piece, _, _ in pieces[3:]), FAIRSEQ_MASK]
    return vocabulary, dict(sentencepiece=proto)


def _read_unigram_json(folder):
    tokenizer = read_json(folder / "tokenizer.json")
    model = tokenizer.get("model") or {}
    vocabulary = [piece for piece, _ in model.get("vocab") or []]
    metaspace = _metaspace(tokenizer.get("pre_tokenizer") or {})
    charsmap = _charsmap(tokenizer.get("normalizer"))
    if (
        model.get("type") != "Unigram"
        or model.get("byte_fallback")
        or tuple(vocabulary[:4]) != FAIRSEQ_SPECIALS
        or vocabulary[-1:] != [FAIRSEQ_MASK]
        or not metaspace
        or metaspace.get("prepend_scheme", "always") != "always"
        or charsmap is None
    ):
        raise DataError(
            f"model.pretrained: {folder}/tokenizer.json is not XLM-RoBERTa's tokenizer (a "
            f"Unigram model without byte fallback, {' '.join(FAIRSEQ_SPECIALS)} first and "
            f"{FAIRSEQ_MASK} last, a Metaspace pre-tokenizer that prepends '▁', a Precompiled "
            "normalizer); save the checkpoint's tokenizer with XLMRobertaTokenizer"
        )
    # The SentencePiece model's own first pieces; fairseq's <pad> and <mask> are not in it.
    pieces = [("<unk>", 0.0, UNKNOWN), ("<s>", 0.0, CONTROL), ("</s>", 0.0, CONTROL)]
    pieces += [(piece, float(score), NORMAL) for piece, score in model["vocab"][4:-1]]
    return vocabulary, dict(sentencepiece=model_from_unigram(pieces, charsmap))


def _metaspace(pre_tokenizer):
    """The Metaspace step of a pre-tokenizer (alone, or in a Sequence after a whitespace
    split, which SentencePiece's dropping of extra spaces matches); None if another."""
    steps = pre_tokenizer.get("pretokenizers") or [pre_tokenizer]
    if [step.get("type") for step in steps] not in (
        ["Metaspace"],
        ["WhitespaceSplit", "Metaspace"],
    ):
        return None
    return steps[-1] if steps[-1].get("replacement", "▁") == "▁" else None


def _charsmap(normalizer):
    """The Precompiled normalizer's table (base64 -> bytes), b"" for no normalizer; None if
    it does more than SentencePiece's model does (its extra-space and strip steps it does)."""
    steps = (normalizer or {}).get("normalizers") or ([normalizer] if normalizer else [])
    charsmap = b""
    for step in steps:
        if step.get("type") == "Precompiled":
            charsmap = base64.b64decode(step.get("precompiled_charsmap") or "")
        elif step.get("type") == "Strip" or (
            step.get("type") == "Replace" and step.get("pattern", {}).get("Regex") == " {2,}"
        ):
            continue
        else:
            return None
    return charsmap


def _check_files(folder, kind):
    missing = [name for name in TOKENIZER_FILES[kind] if not (folder / name).is_file()]
    if missing:
        raise DataError(
            f"model.pretrained: {folder} has no tokenizer.json and no {', '.join(missing)}; "
            f"save the checkpoint's tokenizer into it (save_pretrained)"
        )
