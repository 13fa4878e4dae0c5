"""The offline viewer, checked in a real headless Chromium (the Debian `chromium` package;
`open_viewer` is in viewer_browser.py)."""

import json
import re
import shutil

import numpy as np
import pytest

from inspection.attention_file.record import AttentionRecord
from inspection.rendering import viewer as viewer_module
from inspection.rendering.viewer import PAGE_DIR, embed_json, write_viewer
from inspection.token_schemes import BYTE_LEVEL_BPE, WORD_PIECE
from tests.helpers import CLASS_NAMES, HOSTILE_TOKENS, make_records, peaked_scores
from tests.inspection.viewer_browser import heatmap_pixels, open_viewer


def test_embedded_json_cannot_close_the_script_block():
    text = embed_json({"token": HOSTILE_TOKENS[2]})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"token": HOSTILE_TOKENS[2]}


def test_page_is_self_contained(tmp_path):
    page = write_viewer(tmp_path, make_records(), CLASS_NAMES).read_text()
    assert page.count("<script") == 2  # the data block and the viewer code
    assert "http://" not in page.replace('"http://www.w3.org/2000/svg"', "")
    assert "https://" not in page
    assert "<script>alert(1)" not in page
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in page


def test_page_inlines_the_page_files_verbatim(tmp_path):
    page = write_viewer(tmp_path, make_records(), CLASS_NAMES).read_text()
    assert (PAGE_DIR / "viewer.css").read_text() in page
    assert (PAGE_DIR / "viewer.js").read_text() in page
    assert (PAGE_DIR / "viewer_methods.js").read_text() in page
    assert (PAGE_DIR / "viewer_heads.js").read_text() in page
    template = (PAGE_DIR / "viewer.html").read_text()
    markup = re.split(r"__VIEWER_[A-Z]+__", template)
    assert len(markup) == 7  # the policy, the title twice, CSS, data, JS
    position = 0
    for piece in markup:  # the markup around the placeholders, unchanged and in order
        position = page.index(piece, position) + len(piece)
    assert "__VIEWER_" not in page


def test_placeholder_names_in_the_title_or_tokens_are_shown_as_text(tmp_path):
    record = make_records()[2]
    record.tokens[0] = "__VIEWER_JS__"
    page = write_viewer(tmp_path, [record], CLASS_NAMES, title="__VIEWER_DATA__ <b>").read_text()
    assert "<title>__VIEWER_DATA__ &lt;b&gt;</title>" in page
    assert '"tokens": ["__VIEWER_JS__", "story"]' in page
    assert page.count("<script") == 2 and page.count('"use strict"') == 1


@pytest.mark.parametrize(
    "name, text",
    [
        ("viewer.js", 'const END = "</SCRIPT>";\n'),
        ("viewer.js", 'const COMMENT = "<!--";\n'),
        ("viewer_methods.js", "// </script>\n"),
        ("viewer_heads.js", "// <!-- \n"),
        ("viewer.css", "/* </style> */\n"),
    ],
)
def test_refuses_page_files_that_would_end_their_block(tmp_path, monkeypatch, name, text):
    page_dir = shutil.copytree(PAGE_DIR, tmp_path / "viewer_page")
    (page_dir / name).write_text(text)
    monkeypatch.setattr(viewer_module, "PAGE_DIR", page_dir)
    with pytest.raises(ValueError, match=f"{name} cannot be inlined"):
        write_viewer(tmp_path, make_records(), CLASS_NAMES)


@pytest.fixture
def viewer(browser, tmp_path):
    path = write_viewer(tmp_path, make_records(), CLASS_NAMES, meta={"format_version": 3})
    with open_viewer(browser, path) as opened:
        yield opened


def test_loads_from_file_without_errors_or_network(viewer):
    page, problems, requests, _ = viewer
    assert problems == []
    assert all(url.startswith("file://") for url in requests), requests
    assert page.locator("#example-select option").count() == 4
    assert page.locator("#head-select option").all_text_contents() == [
        "mean of heads",
        "head 0",
        "head 1",
        "head 2",
    ]
    assert page.locator("#predicted-label").text_content() == "negative"
    assert page.locator("#rollout span").count() == 5
    assert page.locator("#lines line").count() > 0


def test_switching_layer_head_and_example_changes_the_view(viewer):
    page, problems, _, _ = viewer
    first = heatmap_pixels(page)
    page.select_option("#layer-select", "1")
    after_layer = heatmap_pixels(page)
    page.select_option("#head-select", "2")
    after_head = heatmap_pixels(page)
    assert len({first, after_layer, after_head}) == 3
    assert page.evaluate("document.body.dataset.view") == "0:1:2"

    page.select_option("#example-select", "2")
    assert page.locator("#rollout").text_content() == "greatstory"
    assert page.locator("#true-label").text_content() == "negative"
    assert page.locator("#predicted-label").text_content() == "positive"
    assert page.locator("#predicted-label").get_attribute("class") == "wrong"
    assert heatmap_pixels(page) != after_head

    page.locator("#lines text").first.click()  # follow query 0: only its lines to 2 keys remain
    assert 0 < page.locator("#lines line").count() <= 2
    assert page.locator("#lines text.active").text_content() == "great"

    page.select_option("#example-select", "3")
    assert page.locator("#rollout").text_content() == "(no tokens)"
    assert problems == []


def test_hostile_tokens_are_shown_as_text_and_never_run(viewer):
    page, problems, _, dialogs = viewer
    page.select_option("#example-select", "1")
    rollout_tokens = page.locator("#rollout span").all_text_contents()
    assert rollout_tokens[1:5] == HOSTILE_TOKENS
    assert HOSTILE_TOKENS[0] in page.locator("#text").text_content()
    # Hover everything a mouseover handler could hide in.
    for locator in page.locator("#rollout span").all() + page.locator("#lines text").all():
        locator.hover()
    page.locator("#heatmap").hover()
    assert dialogs == []
    assert page.evaluate("window.pwned") is None
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("document.scripts.length") == 2
    assert (
        page.evaluate(
            "[...document.querySelectorAll('*')].filter(node => "
            "[...node.attributes].some(attribute => attribute.name.startsWith('on'))).length"
        )
        == 0
    )
    assert problems == []


# A WordPiece example: "[CLS]" and "[SEP]" around the pieces of "they played <script> well".
PIECES = ["[CLS]", "they", "play", "##ed", "<", "##script>", "well", "[SEP]"]
PIECE_WORD_INDEX = [None, 0, 1, 1, 2, 2, 3, None]
PIECE_ROLLOUT = [0.3, 0.1, 0.05, 0.15, 0.1, 0.1, 0.1, 0.1]


def piece_viewer(browser, tmp_path, tokens, word_index, scheme, text, rollout):
    """The viewer of one example read as `tokens`, its words as `scheme` joins them."""
    record = AttentionRecord(
        example_id="00000",
        text=text,
        tokens=tokens,
        attention_scores=peaked_scores(2, 12, len(tokens), seed=7),
        probabilities=np.array([0.3, 0.7], "float32"),
        predicted_label_index=1,
        true_label_index=1,
        rollout_importance=np.array(rollout),
        word_index=word_index,
        word_texts=scheme.words(tokens, word_index),
    )
    path = write_viewer(tmp_path, [record], CLASS_NAMES, meta={"pooling": "cls"})
    return open_viewer(browser, path)


@pytest.fixture
def word_piece_viewer(browser, tmp_path):
    text = "They played <script> well"
    with piece_viewer(
        browser, tmp_path, PIECES, PIECE_WORD_INDEX, WORD_PIECE, text, PIECE_ROLLOUT
    ) as opened:
        yield opened


def test_space_marked_pieces_read_as_their_words(browser, tmp_path):
    # RoBERTa's "<s> Ġcaf Ã© Ġplay ed </s>": "café" is bytes, shown whole; "played" in pieces.
    tokens = ["<s>", "Ġcaf", "Ã©", "Ġplay", "ed", "</s>"]
    indices = BYTE_LEVEL_BPE.word_index(tokens)
    rollout = [1 / 6] * 6
    viewer = piece_viewer(
        browser, tmp_path, tokens, indices, BYTE_LEVEL_BPE, "café played", rollout
    )
    with viewer as (page, problems, _, _):
        spans = page.locator("#rollout > span")
        assert spans.all_text_contents() == ["<s>", "café", "played", "</s>"]
        assert page.locator("#rollout span.word span.piece").all_text_contents() == [
            "play",
            "ed",
        ]
        assert spans.nth(1).get_attribute("title").startswith("café: 0.3333 = Ġcaf 0.1667 + ")
        assert problems == []


def test_word_pieces_show_joined_into_their_words_and_specials_apart(word_piece_viewer):
    page, problems, _, dialogs = word_piece_viewer
    assert page.locator("#head-select option").count() == 13  # the mean and 12 heads
    assert page.locator("#rollout > span").all_text_contents() == [
        "[CLS]",
        "they",
        "played",
        "<script>",
        "well",
        "[SEP]",
    ]
    words = page.locator("#rollout span.word")
    assert words.all_text_contents() == ["played", "<script>"]
    assert words.first.locator("span.piece").all_text_contents() == ["play", "ed"]
    # A word's box says its sum and its pieces' own values.
    assert words.first.get_attribute("title") == "played: 0.2000 = play 0.0500 + ##ed 0.1500"
    assert words.first.locator("span.piece").last.get_attribute("title") == (
        '##ed (a piece of "played"): 0.1500 of the word\'s 0.2000'
    )
    assert page.locator("#rollout span.special").all_text_contents() == ["[CLS]", "[SEP]"]
    assert page.locator("#rollout span.special").first.get_attribute("title") == (
        "[CLS] (special token, not a word of the text): 0.3000"
    )
    # Coloured by the word's sum: "played" and "<script>" (0.2 each) alike, "they" (0.1) paler.
    backgrounds = page.evaluate(
        "[...document.querySelectorAll('#rollout > span')].map(s => s.style.background)"
    )
    assert backgrounds[2] == backgrounds[3] != backgrounds[1] == backgrounds[4]
    assert backgrounds[0] == backgrounds[5] == ""  # specials keep their own style
    note = page.locator("#rollout-note").text_content()
    assert "pieces of a word share one box" in note and "Dashed tokens are special" in note
    # The heatmap and the lines stay per piece, specials marked.
    assert page.locator("#lines text").count() == 2 * len(PIECES)
    assert page.locator("#lines text.special").all_text_contents() == ["[CLS]"] * 2 + ["[SEP]"] * 2
    box = page.locator("#heatmap").bounding_box()
    margin, cell = (
        float(page.evaluate(f"document.getElementById('heatmap').dataset.{name}"))
        for name in ("margin", "cell")
    )
    page.mouse.move(box["x"] + margin + 0.5 * cell, box["y"] + margin + 3.5 * cell)
    assert (
        page.locator("#status")
        .text_content()
        .startswith('query 3 "##ed (played)" -> key 0 "[CLS]": ')
    )
    assert dialogs == [] and page.evaluate("document.scripts.length") == 2
    assert problems == []


def test_only_the_live_page_may_ask_a_server():
    policy = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')
    [offline] = policy.findall(viewer_module.render_page("t", {"examples": []}))
    [live] = policy.findall(
        viewer_module.render_page("t", {"examples": []}, viewer_module.LIVE_PAGE_POLICY)
    )
    # The page's own script and style run by their hashes; no other inline code would.
    [script, style] = re.findall(r"'sha256-[A-Za-z0-9+/]{43}='", offline)
    assert offline == (f"default-src 'none'; script-src {script}; style-src {style}; img-src data:")
    assert offline == viewer_module.page_policy()
    assert live == offline + "; connect-src 'self'"
