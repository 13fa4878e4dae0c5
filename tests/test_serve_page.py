"""The live lab's page (viewer_live.js) in headless Chromium against a running serve.py: what
it shows for a typed text, an edited word and two runs equals the API's answers."""

import contextlib
import json
import re
import shutil

import pytest

import compress
import evaluate
from engine.evaluation.live import MAX_CHARACTERS
from tests.inspection.viewer_browser import browser, watched_page  # noqa: F401
from tests.lab_server import predict, request, running_lab

# 20 words, past the tiny run's cap of 16 tokens.
TEXT = (
    "a wonderful film with a moving story but a dull and far too long ending that never "
    "lands at all"
)
HOSTILE = "<img src=x onerror=alert(1)> a <script>alert(2)</script> film"
# What the page prints of a probability and of a difference: 4 decimals.
ROUNDING = 6e-5


@pytest.fixture(scope="module")
def lab(tiny_run_dir, tmp_path_factory):
    """(URL, run folder) of the lab serving a copy of the tiny run, which measured its heads
    and words, and its int8 copy, which measured nothing."""
    run_dir = tmp_path_factory.mktemp("lab") / "tiny"
    shutil.copytree(tiny_run_dir, run_dir, ignore=shutil.ignore_patterns("eval", "attention"))
    assert (
        evaluate.main(
            [
                str(run_dir),
                "--split",
                "validation",
                "--heads",
                "8",
                "--tokens",
                "16",
                "--min-count",
                "2",
            ]
        )
        == 0
    )
    assert compress.main([str(run_dir), "--int8"]) == 0
    with running_lab([run_dir, run_dir.parent / "tiny_int8"]) as url:
        yield url, run_dir


@contextlib.contextmanager
def live_page(browser, url):  # noqa: F811 (the fixture imported above)
    """Yields (page, problems, requests, dialogs) of the lab's page once it is ready, as
    viewer_browser.open_viewer does for a file."""
    page, problems, requests, dialogs = watched_page(browser)
    page.goto(url + "/")
    page.wait_for_selector("body[data-live='ready']", state="attached")
    try:
        yield page, problems, requests, dialogs
    finally:
        page.close()


def answered(page, action):
    """Runs `action` (a click, a key, a select) and waits until the page has the answer of
    the request it sent (the policy forbids wait_for_function's eval)."""
    done = int(page.evaluate("document.body.dataset.liveDone || '0'"))
    action()
    page.wait_for_selector(f"body[data-live-done='{done + 1}']", state="attached")


def type_and_predict(page, text):
    page.fill("#live-text", text)
    answered(page, lambda: page.click("#live-predict"))


def shown_probabilities(page):
    rows = page.locator("#probabilities .prob-row")
    return {
        row.locator("span").first.text_content(): float(row.locator("span").last.text_content())
        for row in rows.all()
    }


def numbers(text):
    return [float(number) for number in re.findall(r"[-+]?\d+\.\d+", text)]


def test_a_typed_text_shows_the_apis_prediction_and_maps(browser, lab):  # noqa: F811
    url, _ = lab
    body = predict(url, run="tiny", texts=[TEXT], attention=True)
    [answer] = body["answers"]
    with live_page(browser, url) as (page, problems, requests, _):
        assert page.locator("#live-method").input_value() == answer["explanation_method"]
        page.fill("#live-text", TEXT)
        answered(page, lambda: page.press("#live-text", "Control+Enter"))
        assert page.locator("#live-status").text_content() == ""
        assert page.locator("#predicted-label").text_content() == answer["predicted_label"]
        assert shown_probabilities(page) == pytest.approx(answer["probabilities"], abs=ROUNDING)
        assert page.locator("#text").text_content() == TEXT
        view = answer["view"]
        assert page.locator("#rollout [data-word]").all_text_contents() == view["words"]
        assert (
            page.locator("#model-view .thumbnail").count() == view["num_layers"] * view["num_heads"]
        )
        assert page.locator("#lines text").count() == 2 * len(view["tokens"])
        assert re.fullmatch(r"tiny answered in \d+ ms", page.locator("#live-time").text_content())
        # The page says how much of the text the model read.
        _, _, runs = request(url, path="/api/runs")
        cap = json.loads(runs)["runs"][0]["sequence_length"]
        assert answer["truncated"] and answer["token_count"] == 20 and cap < 20
        assert page.locator("#live-truncated").text_content() == (
            f"The model read the first {cap} tokens of 20 (tiny)."
        )
        assert problems == []
        assert all(sent.startswith(url + "/") for sent in requests), requests


def test_removing_or_replacing_a_word_shows_the_probability_move(browser, lab):  # noqa: F811
    url, _ = lab
    text = "A wonderful film!"
    [original] = predict(url, run="tiny", texts=[text])["answers"]
    words, label = original["view"]["words"], original["predicted_label"]
    # "Before" is the words the model read, joined as the edits join them.
    [joined] = predict(url, run="tiny", texts=[" ".join(words)])["answers"]
    before = joined["probabilities"][label]
    with live_page(browser, url) as (page, problems, requests, _):
        type_and_predict(page, text)
        page.locator("#rollout [data-word='1']").click()
        assert page.locator("#live-word").input_value() == words[1]
        answered(page, lambda: page.click("#live-remove"))
        page.locator("#rollout [data-word='2']").click()
        page.fill("#live-word", "dull")
        answered(page, lambda: page.click("#live-replace"))
        edits = [
            [
                page.locator(f"#live-edits [data-edit='{part}']").nth(row).text_content()
                for part in ("change", "text", "probability", "predicted")
            ]
            for row in range(2)
        ]
        # The original stays on screen.
        assert page.locator("#text").text_content() == text
        assert page.locator("#predicted-label").text_content() == label
        assert problems == []
        assert all(sent.startswith(url + "/") for sent in requests), requests
    edited_texts = [" ".join(words[:1] + words[2:]), " ".join(words[:2] + ["dull"])]
    edited = predict(url, run="tiny", texts=edited_texts)["answers"]
    for (_, shown_text, probability, predicted), wanted, answer in zip(
        edits, edited_texts, edited, strict=True
    ):
        assert shown_text == wanted and predicted == answer["predicted_label"]
        assert probability.startswith(f"p({label}) ")
        after = answer["probabilities"][label]
        assert numbers(probability) == pytest.approx(
            [before, after, after - before], abs=2 * ROUNDING
        )
    assert [edit[0] for edit in edits] == [f'removed "{words[1]}"', f'"{words[2]}" -> "dull"']


def test_two_runs_are_compared_class_by_class_and_word_by_word(browser, lab):  # noqa: F811
    url, _ = lab
    [first] = predict(url, run="tiny", texts=[TEXT])["answers"]
    [second] = predict(url, run="tiny_int8", texts=[TEXT])["answers"]
    method = first["explanation_method"]
    with live_page(browser, url) as (page, problems, _, _):
        page.select_option("#live-compare", "tiny_int8")
        type_and_predict(page, TEXT)
        assert not page.locator("#compare-section").is_hidden()

        def cells(table, row):
            return page.locator(f"#{table} [data-row='{row}']").all_text_contents()

        assert cells("compare-classes", "predicted") == [
            "predicted",
            first["predicted_label"],
            second["predicted_label"],
            "",
        ]
        for name, p_first in first["probabilities"].items():
            p_second = second["probabilities"][name]
            shown = cells("compare-classes", name)
            assert shown[0] == f"p({name})"
            assert [float(value) for value in shown[1:]] == pytest.approx(
                [p_first, p_second, p_second - p_first], abs=2 * ROUNDING
            )
        # The same tokenizer: the words pair up.
        words = first["view"]["words"]
        assert words == second["view"]["words"]
        scores = [answer["view"]["methods"][method]["words"] for answer in (first, second)]
        for index, word in enumerate(words):
            shown = cells("compare-words", index)
            assert shown[0] == word
            assert [float(value) for value in shown[1:]] == pytest.approx(
                [scores[0][index], scores[1][index], scores[1][index] - scores[0][index]],
                abs=2 * ROUNDING,
            )
        assert (
            page.locator("#compare-words-note")
            .text_content()
            .startswith(f"Per word its {method} score")
        )
        assert problems == []


def test_runs_that_read_different_words_are_listed_apart(browser, lab):  # noqa: F811
    # Both tiny runs share a tokenizer: answers to two texts stand in for two tokenizers'.
    url, _ = lab
    first = predict(url, run="tiny", texts=["a wonderful film"])
    second = predict(url, run="tiny_int8", texts=["a dull and boring film"])
    method = first["answers"][0]["explanation_method"]
    with live_page(browser, url) as (page, problems, _, _):
        page.evaluate(
            "([first, second]) => showComparison(liveRun('tiny'), first, "
            "liveRun('tiny_int8'), second)",
            [first, second],
        )
        assert (
            page.locator("#compare-words-note")
            .text_content()
            .startswith(
                "The runs read the text as different words (different tokenizers), so their "
                "words cannot be paired"
            )
        )
        for name, body in (("tiny", first), ("tiny_int8", second)):
            view = body["answers"][0]["view"]
            rows = [
                page.locator(f"#compare-words [data-row='{name}:{index}']").all_text_contents()
                for index in range(len(view["words"]))
            ]
            assert [row[0] for row in rows] == view["words"]
            assert [float(row[1]) for row in rows] == pytest.approx(
                view["methods"][method]["words"], abs=ROUNDING
            )
        assert page.locator("#compare-words [data-column='2']").count() == 0
        assert problems == []


def test_switching_runs_swaps_the_heads_and_dataset_panels(browser, lab):  # noqa: F811
    url, run_dir = lab
    measured = json.loads((run_dir / "eval" / "validation" / "heads.json").read_text())
    tokens = json.loads((run_dir / "eval" / "validation" / "tokens.json").read_text())
    [int8] = predict(url, run="tiny_int8", texts=[TEXT])["answers"]
    with live_page(browser, url) as (page, problems, _, _):
        assert not page.locator("#heads-section").is_hidden()
        titles = page.locator("#heads-grid .heads-cell").evaluate_all(
            "cells => cells.map(cell => cell.title)"
        )
        shown = {
            tuple(map(int, re.findall(r"\d+", title)[:2])): numbers(title)[-1] for title in titles
        }
        assert shown == pytest.approx(
            {(head["layer"], head["head"]): head["importance"] for head in measured["heads"]},
            abs=ROUNDING,
        )
        assert not page.locator("#dataset-section").is_hidden()
        assert page.locator("#dataset-class option").all_text_contents() == list(tokens["classes"])
        type_and_predict(page, TEXT)
        # The text on screen is asked of the run switched to.
        answered(page, lambda: page.select_option("#live-run", "tiny_int8"))
        assert page.locator("#heads-section").is_hidden()
        assert page.locator("#dataset-section").is_hidden()
        assert json.loads(page.locator("#run").text_content())["run"] == "tiny_int8"
        assert page.locator("#live-compare option").all_text_contents() == ["none", "tiny"]
        assert shown_probabilities(page) == pytest.approx(int8["probabilities"], abs=ROUNDING)
        answered(page, lambda: page.select_option("#live-run", "tiny"))
        assert page.locator("#heads-grid .heads-cell").count() == len(measured["heads"])
        assert not page.locator("#dataset-section").is_hidden()
        assert problems == []


def test_a_script_bearing_text_shows_as_text_and_never_runs(browser, lab):  # noqa: F811
    url, _ = lab
    with live_page(browser, url) as (page, problems, requests, dialogs):
        page.select_option("#live-compare", "tiny_int8")
        type_and_predict(page, HOSTILE)
        page.locator("#rollout [data-word='0']").click()
        answered(page, lambda: page.click("#live-remove"))
        assert page.locator("#text").text_content() == HOSTILE
        assert page.locator("#live-text").input_value() == HOSTILE
        assert dialogs == []
        assert page.evaluate("document.querySelectorAll('img').length") == 0
        assert page.evaluate("document.scripts.length") == 2
        assert problems == []
        assert all(sent.startswith(url + "/") for sent in requests), requests


def test_a_refused_text_shows_the_apis_error_and_keeps_the_answer(browser, lab):  # noqa: F811
    url, _ = lab
    long_text = "a" * (MAX_CHARACTERS + 1)
    status, _, body = request(
        url, "POST", "/api/predict", {"run": "tiny", "texts": [long_text], "attention": True}
    )
    assert status == 400
    with live_page(browser, url) as (page, _, _, _):
        type_and_predict(page, TEXT)
        label = page.locator("#predicted-label").text_content()
        type_and_predict(page, long_text)
        assert page.locator("#live-status").text_content() == json.loads(body)["error"]
        assert page.locator("#live-status").get_attribute("class") == "error"
        assert page.locator("#predicted-label").text_content() == label
        type_and_predict(page, "   ")
        assert (
            page.locator("#live-status").text_content() == "text 1 is empty; give it a word or more"
        )
