"""A checkpoint's tokenizer files, read into the vocabulary (in the checkpoint's id order)
and the options of our tokenizer layer for its family: WordPiece (BERT, DistilBERT,
ELECTRA) from tokenizer.json or vocab.txt, byte-level BPE (RoBERTa) from tokenizer.json or
vocab.json and merges.txt. Which family a folder is, is config.json's (`families`)."""

import json

from runtime.errors import DataError

# Either file set holds a family's tokenizer (tokenizer.json first).
TOKENIZER_FILES = {
    "WordPiece": ("vocab.txt",),
    "ByteLevelBPE": ("vocab.json", "merges.txt"),
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


def _check_files(folder, kind):
    missing = [name for name in TOKENIZER_FILES[kind] if not (folder / name).is_file()]
    if missing:
        raise DataError(
            f"model.pretrained: {folder} has no tokenizer.json and no {', '.join(missing)}; "
            f"save the checkpoint's tokenizer into it (save_pretrained)"
        )
