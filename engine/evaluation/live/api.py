"""POST /api/predict of the live lab (serve.py): what one request may ask (its fields, its
texts), how much work and memory it may cost, and its answer. Each refusal is a
`RequestError` of one line that names the limit and the way past it
(docs/live_lab.md#bounds).

Example:
>>> limits = RequestLimits(max_tokens=1_000, max_attention_bytes=512 * MIB)
>>> limits.check([512, 512], num_layers=6, num_heads=12, attention=True)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
engine.evaluation.live.api.RequestTooLarge: the texts hold 1,024 tokens ... at most 1,000 ...
"""

import dataclasses
import json
import time

from tokenization.pairs import as_text

MAX_TEXTS = 64  # per request
MAX_CHARACTERS = 10_000  # per text: about 2,000 words, past any model's cap (512)
MIB = 2**20
FIELDS = ("run", "texts", "method", "attention")


class RequestError(ValueError):
    """A request the lab refuses; the message is one line, sent back as JSON (400)."""


class RequestTooLarge(RequestError):
    """A request over a bound of its cost (serve.py answers 413)."""


@dataclasses.dataclass(frozen=True)
class RequestLimits:
    """How much one request may cost a run (serve.py's flags, whose defaults say why).

    Args:
        max_tokens: tokens over the request's texts, each cut to the run's cap.
        max_attention_bytes: float32 attention maps (layers x heads x tokens^2 x 4 bytes,
            summed over the texts) the request may ask for, and the most one forward pass
            that reads maps may hold.
    """

    max_tokens: int
    max_attention_bytes: int

    def __post_init__(self):
        for name in ("max_tokens", "max_attention_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1. Received: {getattr(self, name)}")

    def check(self, lengths, num_layers, num_heads, attention):
        """A RequestTooLarge unless texts of `lengths` positions each (tokens as the model
        reads them) fit the token budget and, with `attention`, their maps fit the memory
        cap; called before any model work."""
        tokens = int(sum(lengths))
        if tokens > self.max_tokens:
            raise RequestTooLarge(
                f"the texts hold {tokens:,} tokens as the model reads them; the lab takes at "
                f"most {self.max_tokens:,} per request (serve.py --max-request-tokens): send "
                "fewer or shorter texts"
            )
        size = sum(maps_bytes(length, num_layers, num_heads) for length in lengths)
        if attention and size > self.max_attention_bytes:
            raise RequestTooLarge(
                f"their attention maps would take {size / MIB:,.0f} MiB ({num_layers} layers x "
                f"{num_heads} heads x tokens^2 x 4 bytes per text); the lab sends at most "
                f"{self.max_attention_bytes / MIB:,.0f} MiB per request (serve.py "
                "--max-attention-mib): send fewer or shorter texts, or ask without attention"
            )

    def texts_per_pass(self, longest, num_layers, num_heads, batch_size):
        """Texts per forward pass, at most `batch_size`, whose maps at `longest` positions
        fit `max_attention_bytes`; at least 1.

        Example:
        >>> RequestLimits(10_000, max_attention_bytes=300 * MIB).texts_per_pass(512, 6, 12, 8)
        4
        """
        one_text = max(maps_bytes(longest, num_layers, num_heads), 1)
        return max(1, min(batch_size, self.max_attention_bytes // one_text))


def maps_bytes(length, num_layers, num_heads):
    """Bytes of one text's float32 maps (L, N, T, T) at `length` positions.

    Example:
    >>> maps_bytes(512, 6, 12) / MIB
    72.0
    """
    return 4 * num_layers * num_heads * int(length) ** 2


def check_texts(texts):
    """The request's `texts`: a list of 1 to `MAX_TEXTS` strings or [first, second] pairs,
    each with more than
    white space, at most `MAX_CHARACTERS` long and valid Unicode; else a RequestError
    naming the problem.

    Example:
    >>> check_texts(["a good film"])
    ['a good film']
    >>> check_texts([""])
    Traceback (most recent call last):
    ...
    engine.evaluation.live.api.RequestError: text 1 is empty; give it a word or more
    """
    if not isinstance(texts, list):
        raise RequestError(
            f'texts must be a list of strings, e.g. ["a good film"]; got a {type(texts).__name__}'
        )
    try:  # A pair, [first, second], is joined into one string (tokenization.pairs).
        texts = [as_text(text) for text in texts]
    except ValueError as error:
        raise RequestError(str(error)) from None
    if not 1 <= len(texts) <= MAX_TEXTS:
        raise RequestError(f"texts must hold 1 to {MAX_TEXTS} texts; got {len(texts)}")
    for number, text in enumerate(texts, start=1):
        if not text.strip():
            raise RequestError(f"text {number} is empty; give it a word or more")
        if len(text) > MAX_CHARACTERS:
            raise RequestError(
                f"text {number} has {len(text)} characters; the lab takes at "
                f"most {MAX_CHARACTERS} per text"
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # JSON's "\ud800": half a character, no text
            raise RequestError(
                f"text {number} is not valid Unicode (a lone surrogate); send it as UTF-8"
            ) from None
    return texts


def answer_request(labs, request):
    """The JSON answer, as bytes, to a POST /api/predict body (parsed), by one of `labs`
    ({name: `LiveRun`}); a RequestError names what the body got wrong."""
    if not isinstance(request, dict):
        raise RequestError('the body must be a JSON object: {"run", "texts", ...}')
    unknown = sorted(set(request) - set(FIELDS))
    if unknown:
        raise RequestError(
            f"unknown fields {unknown}: the lab takes run, texts, method and attention"
        )
    name = request.get("run")
    if name is None and len(labs) == 1:
        name = next(iter(labs))
    if not isinstance(name, str) or name not in labs:
        raise RequestError(f"run must be one of {sorted(labs)}; got {name!r}")
    if not isinstance(request.get("attention", False), bool):
        raise RequestError("attention must be true or false")
    lab, started = labs[name], time.perf_counter()
    answers = lab.answer(
        check_texts(request.get("texts")),
        request.get("method", "default"),
        request.get("attention", False),
    )
    return json.dumps(
        {
            "run": lab.name,
            "class_names": lab.run.class_names,
            "seconds": round(time.perf_counter() - started, 4),
            "answers": answers,
        },
        allow_nan=False,
    ).encode("utf-8")
