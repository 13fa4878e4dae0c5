"""What the checkpoint tokenizers' tests share: the texts every tokenizer is checked on
and the `tokenizers` library's ids to check them against."""

from tokenizers import Tokenizer

# Normalisation, splitting and length at their edges, for every tokenizer.
HARD_CASES = [
    "Hello, World!",
    "Café naïve résumé ÀÉÎ",
    "中文字符 and 日本語",
    "emoji 😀👍🏽 ok",
    "ctrl\x00\x07char\u200b zero\ufeffwidth",
    "",
    "   ",
    "a" * 100,
    "a" * 101,
    "é" * 60,
    "é" * 101,
    "x" + "é" * 100,
    "ﬁ ß İstanbul ǅ",
    "don't stop-believing... $5.00 #1 @user",
    "tab\there\nnewline\r\n",
    "ＦＵＬＬ　ｗｉｄｔｈ",
    "\u0301 combining",
    "x\u00adsoft hyphen",
    "Ωmega ΣΙΓΜΑ Ελλάδα",
    "\ufffd bad \ue000 private",
    "a\u2028b\u00a0c",
    "ʼnŉ ﬀ Ǆ ẞ",
    "℃ ½ ① ™",
    "¿Qué? ¡Sí! «guillemets» — dash … ellipsis",
    "\U0001f600\u200d\U0001f600",
    "The film was good, not bad!",
    "THE FILMS WERE ACTED " * 20,
]

# GPT-2's split at its edges: whitespace runs (look-ahead), contractions, the marks other
# tokenizers use inside ("६"), NUL (tensorflow-text's regex stops at it), Unicode spaces.
BPE_CASES = [
    "repeated    spaces  here",
    " leading",
    "trailing ",
    "  both  ",
    "  ",
    "a \nb",
    "tab\tand\nnewline\n\nend",
    "x\r\ny",
    "don't you'll WE'VE it's 's's",
    "  's",
    "1234567 3.14 ①②",
    "a\u00a0b\u2009c\u3000d\x85e\x0bf",
    "६ ६६ a६",
    "\x00nul\x7f x \x00\x00!y",
    "e\u0301 combining",
    "一 好 movie's 電影很好",
    "supercalifragilisticexpialidocious " * 3,
]


def theirs(folder, texts, cap=None):
    """The `tokenizers` library's ids (`<s>`=0, `<pad>`=1), longest-first truncated to cap."""
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    reference.no_padding()
    if cap:
        reference.enable_truncation(cap, strategy="longest_first")
    else:
        reference.no_truncation()
    return [encoding.ids for encoding in reference.encode_batch(texts)]


def as_theirs(rows):
    """Our id rows without padding, in the checkpoint's ids (0 and 1 swapped back)."""
    return [[{0: 1, 1: 0}.get(int(i), int(i)) for i in row if i != 0] for row in rows]
