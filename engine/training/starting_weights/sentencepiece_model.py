"""SentencePiece model files (`sentencepiece.bpe.model`, a serialized `ModelProto`) read and
written in protobuf's wire format, in plain Python.

XLM-RoBERTa's tokenizer is a SentencePiece Unigram model: our tokenizer layer
(`tokenization.SentencePieceTokenizer`) runs tensorflow-text's SentencePiece op on the
model's bytes. A checkpoint brings those bytes as `sentencepiece.bpe.model`, or only as the
`tokenizers` library's tokenizer.json (what `transformers` 5 saves), from whose Unigram
pieces and scores and `Precompiled` normalizer `model_from_unigram` writes the same model.
Only the fields the Unigram encoder reads are handled (sentencepiece_model.proto):

    ModelProto      1 pieces (repeated SentencePiece), 2 trainer_spec, 3 normalizer_spec
    SentencePiece   1 piece (string), 2 score (float), 3 type (enum)
    TrainerSpec     3 model_type (enum: 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR)
    NormalizerSpec  2 precompiled_charsmap (bytes), 3 add_dummy_prefix,
                    4 remove_extra_whitespaces, 5 escape_whitespaces (bools)

Why not the `sentencepiece` package's generated classes: reading a checkpoint needs no
package beyond what training installs, and these few fields are the whole format we use.
"""

import struct

# SentencePiece.Type values.
NORMAL, UNKNOWN, CONTROL = 1, 2, 3
UNIGRAM = 1
MODEL_TYPES = {1: "Unigram", 2: "BPE", 3: "Word", 4: "Char"}


class ProtoError(ValueError):
    """The bytes are not a SentencePiece model proto."""


def _varint(data, at):
    value = shift = 0
    while True:
        if at >= len(data):
            raise ProtoError("truncated varint")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def _fields(data):
    """(field number, value) of each field of a message: ints for varints, bytes for
    length-delimited fields, raw 4 or 8 bytes for fixed-width ones."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, kind = key >> 3, key & 7
        if kind == 0:
            value, at = _varint(data, at)
        elif kind == 2:
            size, at = _varint(data, at)
            value, at = data[at : at + size], at + size
        elif kind in (1, 5):
            width = 8 if kind == 1 else 4
            value, at = data[at : at + width], at + width
        else:
            raise ProtoError(f"wire type {kind} at byte {at}")
        if at > len(data):
            raise ProtoError("truncated field")
        yield number, value


def read_pieces(data: bytes):
    """([(piece, score, type)] in id order, the model type's name) of a model proto."""
    pieces, model_type = [], UNIGRAM
    for number, value in _fields(data):
        if number == 1:
            fields = dict(_fields(value))
            piece = fields.get(1, b"").decode("utf-8")
            score = struct.unpack("<f", fields[2])[0] if 2 in fields else 0.0
            pieces.append((piece, score, fields.get(3, NORMAL)))
        elif number == 2:
            model_type = dict(_fields(value)).get(3, UNIGRAM)
    if not pieces:
        raise ProtoError("no pieces")
    return pieces, MODEL_TYPES.get(model_type, str(model_type))


def _key(number, kind):
    return _encode_varint(number << 3 | kind)


def _encode_varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _bytes_field(number, value: bytes):
    return _key(number, 2) + _encode_varint(len(value)) + value


def model_from_unigram(pieces, charsmap: bytes = b"") -> bytes:
    """A Unigram model proto of `pieces` [(piece, score, type)] in id order, normalising with
    `charsmap` (a `Precompiled` normalizer's table; empty: none), adding the dummy prefix
    `▁`, dropping extra spaces and writing spaces as `▁`, as XLM-RoBERTa's model does."""
    out = bytearray()
    for piece, score, kind in pieces:
        message = (
            _bytes_field(1, piece.encode("utf-8"))
            + _key(2, 5)
            + struct.pack("<f", score)
            + _key(3, 0)
            + _encode_varint(kind)
        )
        out += _bytes_field(1, message)
    out += _bytes_field(2, _key(3, 0) + _encode_varint(UNIGRAM))
    flags = b"".join(_key(number, 0) + b"\x01" for number in (3, 4, 5))
    out += _bytes_field(3, (_bytes_field(2, charsmap) if charsmap else b"") + flags)
    return bytes(out)
