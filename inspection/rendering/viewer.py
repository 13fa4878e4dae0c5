"""Writes the offline attention viewer: one self-contained `index.html`.

The page itself lives in `viewer_page/`: `viewer.html` (the markup, with `__VIEWER_*__`
placeholders), `viewer.css`, `viewer.js` (the example and its labels), `viewer_maps.js`
(its heatmap and lines), `viewer_methods.js` (the token importance and its method
switch), `viewer_heads.js`
(the model view and the heads panel), `viewer_dataset.js` (the Dataset panel) and
`viewer_data_quality.js` (its training data map and weak slices), `viewer_calibration.js`
(its reliability diagram and coverage curve), and `viewer_live.js`
(the live lab's text box, edits and comparison, serve.py).
`write_viewer` inlines the CSS and JS, so the page needs no network (no CDN; a
Content-Security-Policy that forbids loading anything, `PAGE_POLICY`) and works from
file://. Data is
embedded as JSON in a `<script type="application/json">` block with `<`, `>` and `&`
escaped, and the script only ever writes text through `textContent`, so tokens such as
`<script>` show as text.

A WordPiece model's pieces are shown joined into their words ("play" "##ed" reads
"played", one box coloured by the sum of its pieces' importance, each piece's own value on
hover), and "[CLS]" and "[SEP]" are marked as special tokens; the heatmap and the lines
stay per piece, as the model attends.

A method switch recolours the words by any attribution method the records carry
(`AttentionRecord.attributions`; rollout alone without them), each described by its entry
in `inspection.methods.attribution`'s docstring, with its faithfulness from `meta["faithfulness"]`
next to it. It starts on the most faithful method when that was measured, else rollout.
Methods that score some word below 0 use a diverging scale: orange for the class, blue
against it.

The model view (as BertViz's) draws every layer x head of the example as a small canvas;
a click opens that head in the heatmap. Given a run's heads measured across a split
(`heads`, from its heads.json through `engine.evaluation.export_blocks.heads_block`), each
thumbnail's border shows the head's importance, and the heads panel shows any of the
measures as a layers x heads grid with its colour scale. Layers and heads count from 0, as
in heads.json. A pruned model's removed heads (`meta["kept_heads"]`) are shown as pruned,
never offered as maps, and left out of the mean of heads.

Attention is stored in the page as one byte per weight, scaled per (layer, head) matrix
to its largest weight (error at most 0.2% of that weight), base64 encoded: about
1.4 bytes per weight instead of about 8 as JSON numbers.
"""

import base64
import hashlib
import html
import json
import pathlib
import re

import numpy as np

from inspection.attention_file.format import VIEWER_FILENAME
from inspection.methods import attribution
from inspection.methods.attribution import DEFAULT_METHOD
from inspection.methods.rollout import token_importance
from inspection.word_pieces import word_sums

QUANTIZATION_LEVELS = 255
# What a page may load: nothing but its own inline script and style, each by its SHA-256
# (`page_policy` fills them in), and data: images; no other inline script runs, not even one
# a text could smuggle in. The live lab's page (serve.py) may also ask the server it came
# from. An element's `style` set from the script (CSSOM) needs no source.
PAGE_POLICY = "default-src 'none'; script-src {script}; style-src {style}; img-src data:"
LIVE_PAGE_POLICY = PAGE_POLICY + "; connect-src 'self'"
PAGE_DIR = pathlib.Path(__file__).with_name("viewer_page")
# `__VIEWER_TITLE__` and the like in viewer.html; names are upper-case letters only.
_PLACEHOLDER = re.compile(r"__VIEWER_([A-Z]+)__")
# "- `name`: what it does" entries of inspection/methods/attribution.py's docstring, the one place
# the methods are described.
_METHOD_ENTRY = re.compile(r"^- `(\w+)`: (.*?)(?=\n- `|\n\n|\Z)", re.MULTILINE | re.DOTALL)
# Read off the maps: the method of records that carry no attribution scores.
MAPS_METHOD = "rollout"
# One script: viewer.js starts it ("use strict") and calls what the others declare.
JS_FILES = (
    "viewer.js",
    "viewer_maps.js",
    "viewer_methods.js",
    "viewer_heads.js",
    "viewer_dataset.js",
    "viewer_data_quality.js",
    "viewer_calibration.js",
    "viewer_live.js",
)


def write_viewer(
    path, records, class_names, meta=None, title="Attention viewer", heads=None, dataset=None
):
    """Writes `index.html` showing `records` (an iterable of `AttentionRecord`).

    Args:
        path: output file (e.g. `out_dir / "index.html"`), or a directory to
            write `index.html` into.
        records: iterable of `AttentionRecord`; every record is embedded, so
            pass a few dozen (the page grows by about 1.4 bytes per weight).
        class_names: list of class names.
        meta: optional JSON-serialisable dict shown under "Run" (e.g. the
            export's meta.json). Its `kept_heads` (a pruned model's heads per layer, by
            their original numbers) says which heads are real; without it every head is.
        title: page title.
        heads: optional, the heads measured across a split
            (`engine.evaluation.export_blocks.heads_block` of a run's heads.json): their
            importance on the model view's thumbnails and every measure in the heads
            panel.
        dataset: optional, the Dataset panel (`engine.evaluation.dataset_panel.dataset_block`
            of a run's eval/ folder): with tokens.json's fields, per class its top words
            (a click lists the embedded examples with it); with `data_map`, the training
            data map as a scatter; with `slices`, the weak slices. Any of the three.

    Returns:
        The path written.

    Example:
    >>> write_viewer("/tmp/viewer", export.records(), export.class_names)  # doctest: +SKIP
    """
    path = pathlib.Path(path)
    if path.suffix.lower() != ".html":
        path = path / VIEWER_FILENAME
    page = render_page(title, viewer_data(records, class_names, meta, heads, dataset))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def viewer_data(records, class_names, meta=None, heads=None, dataset=None):
    """What the page embeds (`render_page`'s `data`); the arguments are `write_viewer`'s."""
    examples = [example_data(record, class_names) for record in records]
    meta = meta or {}
    methods = list(examples[0]["methods"]) if examples else [MAPS_METHOD]
    for example in examples:
        if list(example["methods"]) != methods:
            raise ValueError(
                f"Every record needs the scores of the same methods, {methods}; record "
                f"{example['id']!r} has {list(example['methods'])}."
            )
    # The page starts on what predict.py explains with: the measured best, else its default.
    best = (meta.get("faithfulness") or {}).get("best_method")
    first = next((method for method in (best, DEFAULT_METHOD) if method in methods), methods[0])
    return {
        "class_names": [str(name) for name in class_names],
        "meta": meta,
        "examples": examples,
        "methods": methods,
        "kept_heads": kept_heads(meta, examples),
        "heads": heads,
        "dataset": dataset,
        "default_method": first,
        "descriptions": method_descriptions(),
        # A method whose scores go below 0 anywhere is shown on a diverging scale.
        "signed": {
            method: any(
                min(example["methods"][method]["words"], default=0) < 0 for example in examples
            )
            for method in methods
        },
    }


def render_page(title, data, policy=PAGE_POLICY):
    """Returns the page: `viewer.html` with the CSS, the JS, `title` and `data` filled in,
    under the Content-Security-Policy `policy` (the live lab's allows asking its server).

    Example:
    >>> page = render_page("Reviews <dev>", {"class_names": [], "meta": {}, "examples": []})
    >>> "<title>Reviews &lt;dev&gt;</title>" in page, "__VIEWER_" in page
    (True, False)
    """
    template, code = (PAGE_DIR / "viewer.html").read_text(encoding="utf-8"), _inline_code()
    values = {
        "TITLE": html.escape(str(title)),
        # An attribute in double quotes; a policy has no use for one.
        "POLICY": html.escape(page_policy(policy, code), quote=False).replace('"', "&quot;"),
        **code,
        "DATA": embed_json(data),
    }
    names = set(_PLACEHOLDER.findall(template))
    if names != set(values):
        raise ValueError(
            f"{PAGE_DIR / 'viewer.html'} must hold the placeholders "
            f"{sorted(values)}. Received: {sorted(names)}"
        )
    # One pass over the template: what goes in (a title, a token, the JS) is never searched
    # for placeholders itself, so no content can be mistaken for one.
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


def page_policy(policy=PAGE_POLICY, code=None):
    """`policy` with its `{script}` and `{style}` sources filled in: the SHA-256 of each
    inline `<script>` and `<style>` block as `render_page` writes it with `code`
    (`_inline_code`). They hold the page's files, never its data, so every page has them.

    Example:
    >>> page_policy("script-src {script}; style-src {style}").startswith("script-src 'sha256-")
    True
    """
    template, code = (PAGE_DIR / "viewer.html").read_text(encoding="utf-8"), code or _inline_code()

    def sources(tag):
        # Bare tags only: `<script type="application/json">` holds data, which never runs.
        blocks = re.findall(rf"<{tag}>(.*?)</{tag}>", template, flags=re.DOTALL)
        texts = [_PLACEHOLDER.sub(lambda match: code[match.group(1)], block) for block in blocks]
        digests = [hashlib.sha256(text.encode("utf-8")).digest() for text in texts]
        return " ".join(
            f"'sha256-{base64.b64encode(digest).decode('ascii')}'" for digest in digests
        )

    return policy.format(script=sources("script"), style=sources("style"))


def policy_of(page):
    """The Content-Security-Policy a page from `render_page` holds, e.g. for a header.

    Example:
    >>> policy_of(render_page("t", {"examples": []})) == page_policy()
    True
    """
    [policy] = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    return html.unescape(policy)


def _inline_code():
    """{"CSS", "JS"}: the page's style and script, as they go into its blocks."""
    return {
        "CSS": _inlinable_file("viewer.css", forbidden=("</style",)),
        # In a script, "<!--" can start a state in which "</script>" no longer closes it.
        "JS": "\n".join(_inlinable_file(name, forbidden=("</script", "<!--")) for name in JS_FILES),
    }


def method_descriptions():
    """{method: its description}, from the docstring of `inspection.methods.attribution`.

    Example:
    >>> descriptions = method_descriptions()
    >>> list(descriptions) == list(attribution.METHODS), descriptions["random"]
    (True, 'uniform random scores, the floor.')
    """
    return {
        name: " ".join(text.replace("`", "").split())
        for name, text in _METHOD_ENTRY.findall(attribution.__doc__)
    }


def embed_json(data):
    """Serialises `data` so it can sit inside an HTML `<script>` block.

    Escaping `<`, `>` and `&` means no token can close the block (`</script>`) or
    open a comment; `ensure_ascii` also escapes U+2028 and U+2029.

    Example:
    >>> embed_json({"token": "</script>"})
    '{"token": "\\\\u003c/script\\\\u003e"}'
    """
    text = json.dumps(data, ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _inlinable_file(name, forbidden):
    """The text of `PAGE_DIR / name`, refused if it holds what would end its block early."""
    text = (PAGE_DIR / name).read_text(encoding="utf-8")
    for marker in forbidden:
        # The HTML parser matches end tags case-insensitively.
        if marker in text.lower():
            raise ValueError(
                f"{PAGE_DIR / name} cannot be inlined into the page: it contains {marker!r}."
            )
    # Each placeholder has a line of its own in viewer.html, which brings the last newline.
    return text.removesuffix("\n")


def example_data(record, class_names, attention=True):
    """One record as the page draws it: its tokens, words, prediction, every method's token
    and word scores and, unless `attention` is False, its maps, one byte per weight."""
    scores = np.asarray(record.attention_scores, dtype=np.float32)  # (L, N, T, T)
    importance = record.rollout_importance
    if importance is None:
        importance = token_importance(scores)
    word_index = record.token_word_index
    # Without attribution methods the record's rollout is the one shown.
    token_scores = record.attributions or {MAPS_METHOD: importance}
    true_index = record.true_label_index
    return {
        "id": str(record.example_id),
        "text": str(record.text),
        "tokens": [str(token) for token in record.tokens],
        "true_label": None if true_index is None else str(class_names[true_index]),
        "predicted_label": str(class_names[record.predicted_label_index]),
        "probabilities": [round(float(value), 6) for value in record.probabilities],
        # Per token its word's index, null for a special token; per word its text; per
        # method the tokens' scores and each word's sum of its pieces'.
        "word_index": [None if index is None else int(index) for index in word_index],
        "words": [str(word) for word in record.words],
        "methods": {
            method: {"tokens": _rounded(values), "words": _rounded(word_sums(values, word_index))}
            for method, values in token_scores.items()
        },
        "num_layers": int(scores.shape[0]),
        "num_heads": int(scores.shape[1]),
        **(_quantized(scores) if attention else {}),
    }


def _quantized(scores):
    """{"scales", "attention"}: maps (L, N, T, T) as one byte per weight, base64, each
    (layer, head) scaled to its largest weight."""
    scales = scores.max(axis=(2, 3)) if scores.shape[2] else np.zeros(scores.shape[:2])  # (L, N)
    safe_scales = np.where(scales > 0, scales, 1.0)[:, :, np.newaxis, np.newaxis]
    quantized = np.rint(scores / safe_scales * QUANTIZATION_LEVELS).astype(np.uint8)
    return {
        "scales": (scales / QUANTIZATION_LEVELS).astype(np.float64).tolist(),
        "attention": base64.b64encode(quantized.tobytes()).decode("ascii"),
    }


def kept_heads(meta, examples):
    """Per layer the numbers of the heads the model has: meta's, else every head."""
    if meta.get("kept_heads"):
        return [[int(head) for head in heads] for heads in meta["kept_heads"]]
    if not examples:
        return []
    return [list(range(examples[0]["num_heads"]))] * examples[0]["num_layers"]


def _rounded(values):
    # Six significant digits: gradient scores can be far below 1e-6 and still rank words.
    return [float(f"{float(value):.6g}") for value in values]
