"""The viewer's Dataset panel in headless Chromium (viewer_dataset.js): per class the words
of tokens.json with their reliance intervals and insertion effects, shortcuts marked, and a click on
a word listing the embedded examples that contain it."""

import pytest

from inspection.rendering.viewer import write_viewer
from tests.helpers import CLASS_NAMES, HOSTILE_TOKENS, make_records
from tests.inspection.viewer_browser import embedded_data, open_viewer


def entry(word, reliance, insertion, shortcut=False, attribution=0.25):
    return {
        "word": word,
        "count": 30,
        "reliance": reliance,
        "reliance_ci": [reliance - 0.1, reliance + 0.1],
        "insertion": insertion,
        "control": 0.01,
        "attribution": attribution,
        "p_class_given_word": 0.9,
        "shortcut": shortcut,
    }


# make_records' texts: "the film was not good", "i <hostile tokens> loved it", "great story".
DATASET = {
    "source": "runs/x/eval/test/tokens.json",
    "split": "test",
    "examples": 1000,
    "method": "conservative_gradient_x_input",
    "faithfulness": {"words": 10, "top_words": 0.08, "random_words": 0.01},
    "classes": {
        "negative": [
            entry("not", 0.9, 0.2, shortcut=True),
            entry("film", 0.3, 0.01, attribution=None),  # in no evaluated text
        ],
        "positive": [
            entry("great", 0.8, 0.15),
            entry(HOSTILE_TOKENS[0], 0.5, 0.05),
            entry("loved", -0.2, -0.01),
        ],
    },
}


def test_the_page_embeds_the_dataset_only_when_given(tmp_path):
    assert (
        embedded_data(write_viewer(tmp_path / "a", make_records(), CLASS_NAMES))["dataset"] is None
    )
    assert (
        embedded_data(write_viewer(tmp_path / "b", make_records(), CLASS_NAMES, dataset=DATASET))[
            "dataset"
        ]
        == DATASET
    )


@pytest.fixture
def dataset_viewer(browser, tmp_path):
    with open_viewer(
        browser, write_viewer(tmp_path, make_records(), CLASS_NAMES, dataset=DATASET)
    ) as opened:
        yield opened


def test_the_panel_shows_each_class_words_and_marks_the_shortcuts(dataset_viewer):
    page, problems, requests, dialogs = dataset_viewer
    assert page.locator("#dataset-section").is_visible()
    assert page.locator("#dataset-words .dataset-word").all_text_contents() == ["not", "film"]
    assert page.locator("#dataset-words .shortcut").all_text_contents() == ["shortcut"]
    # Per word: reliance, insertion (the random words'), attribution.
    assert page.locator("#dataset-words .dataset-value").all_text_contents() == [
        "0.900",
        "0.200 (0.010)",
        "0.250",
        "0.300",
        "0.010 (0.010)",
        "-",
    ]
    # The bars: "not" fills half the box (the largest value's side), its whisker spans
    # [0.8, 1.0] of a scale of 1.0.
    bar = page.locator("#dataset-words .dataset-bar").first
    assert bar.get_attribute("title") == "0.9000 [0.8000, 1.0000]"
    widths = bar.evaluate(
        "(node) => [...node.children].map(child => "
        "child.getBoundingClientRect().width / "
        "node.getBoundingClientRect().width)"
    )
    assert widths == pytest.approx([0.45, 0.1], abs=0.01)
    assert (
        "the top 10 words raise the class's probability by 0.080"
        in page.locator("#dataset-summary").text_content()
    )
    page.select_option("#dataset-class", "positive")
    words = page.locator("#dataset-words .dataset-word").all_text_contents()
    assert words == ["great", HOSTILE_TOKENS[0], "loved"]  # the script tag is text
    assert page.locator("#dataset-words .shortcut").count() == 0
    assert (
        problems == []
        and dialogs == []
        and all(url.startswith(("file:", "data:")) for url in requests)
    )


def test_a_click_on_a_word_lists_the_examples_with_it_and_opens_one(dataset_viewer):
    page, problems, _, _ = dataset_viewer
    page.locator("#dataset-words .dataset-word", has_text="not").click()
    found = page.locator("#dataset-examples .dataset-example")
    assert found.count() == 1 and "the film was not good" in found.first.text_content()
    assert "is in 1 of the 4 examples" in page.locator("#dataset-examples").text_content()
    page.select_option("#dataset-class", "positive")
    page.locator("#dataset-words .dataset-word", has_text="great").click()
    page.locator("#dataset-examples .dataset-example").first.click()
    assert page.locator("#example-select").input_value() == "2"
    assert page.locator("#text").text_content() == "great story"
    assert problems == []
