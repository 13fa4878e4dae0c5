"""The viewer's method switch in headless Chromium: which attribution method colours the
words (a diverging scale for those that go below 0), and its faithfulness or the command
that measures it (viewer_methods.js)."""

import dataclasses
import json
import re

import numpy as np
import pytest

from inspection.rendering import viewer as viewer_module
from inspection.rendering.viewer import write_viewer
from tests.helpers import CLASS_NAMES, make_records
from tests.inspection.viewer_browser import open_viewer

# "the film was not good" scored by two methods: rollout (all positive) and one that finds
# "not" against the predicted class; the faithfulness block names the second the best.
METHOD_SCORES = {
    "rollout": [0.1, 0.15, 0.2, 0.25, 0.3],
    "gradient_x_input": [0.05, 0.01, 0.02, -0.6, 0.4],
}
METHOD_FAITHFULNESS = {
    "source": "runs/x/eval/test/faithfulness.json",
    "split": "test <b>split</b>",
    "examples": 500,
    "bins_percent": [1, 5, 10, 20, 50],
    "best_method": "gradient_x_input",
    "methods": {
        "rollout": {
            "comprehensiveness": {"mean": 0.12, "ci95": [0.1, 0.14]},
            "sufficiency": {"mean": 0.2, "ci95": [0.18, 0.22]},
        },
        "gradient_x_input": {
            "comprehensiveness": {"mean": 0.3, "ci95": [0.25, 0.35]},
            "sufficiency": {"mean": 0.05, "ci95": [0.03, 0.07]},
        },
    },
}


def method_records():
    records = make_records()[:3]
    for record in records:
        record.attributions = {
            method: np.resize(np.array(scores), record.num_tokens)
            for method, scores in METHOD_SCORES.items()
        }
    return records


def word_backgrounds(page):
    return page.evaluate(
        "[...document.querySelectorAll('#rollout > span')].map(s => s.style.background)"
    )


def colours(page):
    """Each word's (red, green, blue) and opacity (Chromium keeps opacity in 1/255 steps)."""
    found = [
        re.fullmatch(r"rgba\((\d+), (\d+), (\d+), ([\d.]+)\)", background)
        for background in word_backgrounds(page)
    ]
    return [(tuple(map(int, match.groups()[:3])), float(match.group(4))) for match in found]


FOR_CLASS, AGAINST_CLASS = (232, 110, 20), (37, 99, 235)


def test_the_method_switch_recolours_the_words_and_shows_its_faithfulness(browser, tmp_path):
    path = write_viewer(
        tmp_path,
        method_records(),
        CLASS_NAMES,
        meta={"format_version": 3, "faithfulness": METHOD_FAITHFULNESS},
    )
    with open_viewer(browser, path) as (page, problems, _, _):
        assert page.locator("#method-select option").all_text_contents() == [
            "rollout",
            "gradient_x_input (best)",
        ]
        # The best method is shown first; "not" (-0.6) is blue, "good" (0.4) orange.
        assert page.locator("#method-select").input_value() == "gradient_x_input"
        assert page.evaluate("document.body.dataset.method") == "gradient_x_input"
        shown = colours(page)
        assert shown[3] == (AGAINST_CLASS, 0.9)
        assert shown[4][0] == FOR_CLASS
        assert shown[4][1] == pytest.approx(0.08 + 0.82 * 0.4 / 0.6, abs=1 / 255)
        assert [colour for colour, _ in shown] == [FOR_CLASS] * 3 + [AGAINST_CLASS, FOR_CLASS]
        assert page.locator("#rollout > span").nth(3).get_attribute("title") == "not: -0.6000"
        assert page.locator("#faithfulness").text_content() == (
            "Comprehensiveness 0.300 (95% CI 0.250 to 0.350), higher is more faithful; "
            "sufficiency 0.050 (95% CI 0.030 to 0.070), lower is more faithful; on 500 "
            "test <b>split</b> examples (the best method)."
        )
        note = page.locator("#rollout-note").text_content()
        assert note.startswith("gradient_x_input: the class logit's gradient")
        assert "blue ones against it" in note

        page.select_option("#method-select", "rollout")
        assert page.evaluate("document.body.dataset.method") == "rollout"
        # Rollout never goes below 0: min-max scaled orange, palest to darkest.
        shown = colours(page)
        assert [colour for colour, _ in shown] == [FOR_CLASS] * 5
        assert [opacity for _, opacity in shown] == pytest.approx(
            [0.08 + 0.82 * step / 4 for step in range(5)], abs=1 / 255
        )
        assert page.locator("#rollout > span").nth(3).get_attribute("title") == "not: 0.2500"
        assert (
            page.locator("#faithfulness")
            .text_content()
            .startswith("Comprehensiveness 0.120 (95% CI 0.100 to 0.140)")
        )
        assert (
            page.locator("#faithfulness")
            .text_content()
            .endswith("examples; best: gradient_x_input.")
        )
        assert (
            page.locator("#rollout-note")
            .text_content()
            .startswith("rollout: attention rollout (Abnar & Zuidema, 2020)")
        )
        # The method stays when the example changes.
        page.select_option("#example-select", "2")
        assert page.locator("#rollout > span").first.get_attribute("title") == "great: 0.1000"
        assert page.locator("#faithfulness b").count() == 0  # the split's name is text
        assert problems == []


def test_without_faithfulness_the_viewer_says_how_to_measure_it(browser, tmp_path):
    meta = {
        "format_version": 3,
        "faithfulness": None,
        "run_info": {"run_dir": "runs/my run", "data": "validation"},
    }
    path = write_viewer(tmp_path, method_records(), CLASS_NAMES, meta=meta)
    with open_viewer(browser, path) as (page, problems, _, _):
        assert page.locator("#method-select").input_value() == "rollout"
        assert page.locator("#method-select option").all_text_contents() == [
            "rollout",
            "gradient_x_input",
        ]
        assert page.locator("#faithfulness").text_content() == (
            "No faithfulness numbers for this export: measure them with python evaluate.py "
            "runs/my run --split validation --faithfulness 500, then export again."
        )
        assert page.locator("#faithfulness code").count() == 1
        page.select_option("#method-select", "gradient_x_input")
        assert colours(page)[3] == (AGAINST_CLASS, 0.9)
        assert page.locator("#faithfulness").text_content().startswith("No faithfulness")
        assert problems == []


def test_records_without_attributions_show_their_rollout(tmp_path):
    data = json.loads(
        re.search(
            r'<script type="application/json" id="attention-data">(.*?)</script>',
            write_viewer(tmp_path, make_records()[:1], CLASS_NAMES).read_text(),
        ).group(1)
    )
    assert data["methods"] == ["rollout"] and data["default_method"] == "rollout"
    assert data["signed"] == {"rollout": False}
    record = make_records()[0]
    assert data["examples"][0]["methods"]["rollout"]["tokens"] == pytest.approx(
        list(viewer_module.token_importance(record.attention_scores)), abs=1e-6
    )


def test_records_must_carry_the_same_methods(tmp_path):
    first, second = method_records()[:2]
    second.attributions = {"rollout": second.attributions["rollout"]}
    with pytest.raises(
        ValueError,
        match="same methods, \\['rollout', 'gradient_x_input'\\]; "
        "record '00001' has \\['rollout'\\]",
    ):
        write_viewer(tmp_path, [first, second], CLASS_NAMES)


def test_without_a_measurement_the_page_starts_on_predicts_default(tmp_path):
    # predict.py explains with conservative gradient x input until a run is measured.
    records = [
        dataclasses.replace(
            record,
            attributions={
                "rollout": np.full(record.num_tokens, 0.5),
                "conservative_gradient_x_input": np.linspace(-1.0, 1.0, record.num_tokens),
            },
        )
        for record in make_records()[:1]
    ]
    data = json.loads(
        re.search(
            r'<script type="application/json" id="attention-data">(.*?)</script>',
            write_viewer(tmp_path, records, CLASS_NAMES).read_text(),
        ).group(1)
    )
    assert data["default_method"] == "conservative_gradient_x_input"
