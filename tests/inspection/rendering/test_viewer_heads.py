"""The viewer's heads in headless Chromium (viewer_heads.js): the model view's thumbnails of
every layer x head, the importance heads.json gives them, the dataset heads panel, and a
pruned model's heads by their original numbers."""

import numpy as np
import pytest

from inspection.attention_file.record import AttentionRecord
from inspection.rendering.viewer import write_viewer
from tests.helpers import CLASS_NAMES, make_records
from tests.inspection.viewer_browser import embedded_data, heatmap_pixels, open_viewer

# make_records' maps are 2 layers x 3 heads; head h of layer l has importance (3l + h) / 100,
# so layer 1 head 2 matters most. "<b>" in the split shows as text.
MEASURES = ["importance", "ablation_accuracy_drop", "to_cls", "entropy"]
HEADS = {
    "source": "runs/x/eval/validation/heads.json",
    "split": "validation <b>",
    "examples": 40,
    "spearman_importance_ablation": 0.59,
    "measures": MEASURES,
    "heads": [
        {
            "layer": layer,
            "head": head,
            "importance": (3 * layer + head) / 100,
            "ablation_accuracy_drop": 0.002 * head,
            "to_cls": 0.1 * head,
            "entropy": None if (layer, head) == (0, 1) else 0.5,
        }
        for layer in range(2)
        for head in range(3)
    ],
}


def test_the_page_embeds_the_heads_only_when_given(tmp_path):
    assert embedded_data(write_viewer(tmp_path / "a", make_records(), CLASS_NAMES))["heads"] is None
    data = embedded_data(write_viewer(tmp_path / "b", make_records(), CLASS_NAMES, heads=HEADS))
    assert data["heads"] == HEADS
    assert data["kept_heads"] == [[0, 1, 2], [0, 1, 2]]


@pytest.fixture
def heads_viewer(browser, tmp_path):
    path = write_viewer(tmp_path, make_records(), CLASS_NAMES, heads=HEADS)
    with open_viewer(browser, path) as opened:
        yield opened


def test_the_model_view_has_every_head_and_a_click_opens_it(heads_viewer):
    page, problems, _, _ = heads_viewer
    thumbnails = page.locator("#model-view .thumbnail")
    assert thumbnails.count() == 6  # 2 layers x 3 heads
    assert page.locator("#model-view .axis").all_text_contents() == [
        "head 0",
        "head 1",
        "head 2",
        "layer 0",
        "layer 1",
    ]
    # Each thumbnail: the map at a pixel per weight (5 tokens).
    assert (
        page.evaluate("[...document.querySelectorAll('#model-view canvas')].map(c => c.width)")
        == [5] * 6
    )
    before = heatmap_pixels(page)
    page.locator('#model-view .thumbnail[data-layer="1"][data-head="2"]').click()
    assert page.evaluate("document.body.dataset.view") == "0:1:2"
    assert (
        page.locator("#layer-select").input_value(),
        page.locator("#head-select").input_value(),
    ) == ("1", "2")
    assert heatmap_pixels(page) != before
    assert page.locator("#model-view .thumbnail.selected").get_attribute("data-head") == "2"
    # The thumbnail shows the very map the heatmap now shows: one of its pixels.
    pixel = page.evaluate("""(() => {
        const canvas = document.querySelector('#model-view .thumbnail.selected canvas');
        return [...canvas.getContext('2d').getImageData(3, 1, 1, 1).data];
    })()""")
    scores = make_records()[0].attention_scores[1, 2]
    colour = page.evaluate(f"viridis({scores[1, 3] / scores.max()})")
    assert np.abs(np.array(pixel[:3]) - colour).max() <= 2 and pixel[3] == 255
    page.select_option("#example-select", "2")  # 2 tokens: the thumbnails are redrawn
    assert (
        page.evaluate("[...document.querySelectorAll('#model-view canvas')].map(c => c.width)")
        == [2] * 6
    )
    assert problems == []


def test_the_thumbnails_show_each_heads_importance(heads_viewer):
    page, problems, _, _ = heads_viewer
    most = page.locator('#model-view .thumbnail[data-layer="1"][data-head="2"]')
    least = page.locator('#model-view .thumbnail[data-layer="0"][data-head="0"]')
    border = "(node) => getComputedStyle(node).borderTopColor"
    assert most.evaluate(border) == "rgb(232, 89, 12)"  # orange: the most important
    assert least.evaluate(border) == "rgb(221, 225, 232)"  # grey: importance 0
    assert most.get_attribute("title") == (
        "layer 1, head 2: click to open it in the heatmap\nimportance 0.0500, rank 1 of 6; "
        "accuracy drop (points) 0.40"
    )
    note = page.locator("#model-view-note").text_content()
    assert "importance on 40 validation <b> examples" in note
    assert note.endswith("Most important: layer 1 head 2, layer 1 head 1, layer 1 head 0.")
    assert problems == []


def test_the_heads_panel_shows_each_measure_across_the_dataset(heads_viewer):
    page, problems, _, _ = heads_viewer
    assert page.locator("#heads-section").is_visible()
    assert "40 validation <b> examples (runs/x/eval/validation/heads.json)" in (
        page.locator("#heads-summary").text_content()
    )
    assert "switched off: 0.59." in page.locator("#heads-summary").text_content()
    assert page.locator("#heads-select option").all_text_contents() == [
        "importance",
        "accuracy drop (points)",
        "to the class token",
        "entropy",
    ]
    cells = page.locator("#heads-grid .heads-cell")
    assert cells.all_text_contents() == ["0.0000", "0.0100", "0.0200", "0.0300", "0.0400", "0.0500"]
    assert (
        page.locator("#heads-low").text_content(),
        page.locator("#heads-high").text_content(),
    ) == ("0.0000", "0.0500")
    page.select_option("#heads-select", "ablation_accuracy_drop")  # shown in points
    assert cells.all_text_contents() == ["0.00", "0.20", "0.40"] * 2
    assert cells.nth(1).get_attribute("title") == ("layer 0, head 1: accuracy drop (points) 0.20")
    page.select_option("#heads-select", "entropy")  # one head not measured
    assert cells.all_text_contents() == ["0.50", "n/a", "0.50", "0.50", "0.50", "0.50"]
    cells.nth(4).hover()
    assert page.locator("#heads-status").text_content() == "layer 1, head 1: entropy 0.50"
    cells.nth(4).click()  # opens that head in the heatmap
    assert page.evaluate("document.body.dataset.view") == "0:1:1"
    assert problems == []


def test_without_heads_there_is_no_panel_and_the_note_says_how_to_measure(browser, tmp_path):
    path = write_viewer(
        tmp_path, make_records(), CLASS_NAMES, meta={"run_info": {"run_dir": "runs/<x>"}}
    )
    with open_viewer(browser, path) as (page, problems, _, _):
        assert page.locator("#heads-section").is_hidden()
        assert page.locator("#model-view .thumbnail").count() == 6
        assert page.locator("#model-view-note").text_content() == (
            "No head importance for this run: measure it with python evaluate.py runs/<x> "
            "--split validation --heads 500."
        )
        assert problems == []


def pruned_record():
    """One layer of 3 heads of which head 1 was pruned: head 0 attends to itself, head 2
    0.6 / 0.4 (both exact in the page's bytes); the removed head's maps are all 0."""
    scores = np.zeros((1, 3, 2, 2), "float32")
    scores[0, 0] = np.eye(2)
    scores[0, 2] = [[0.6, 0.4], [0.4, 0.6]]
    return AttentionRecord(
        example_id="00000",
        text="good film",
        tokens=["good", "film"],
        attention_scores=scores,
        probabilities=np.array([0.2, 0.8], "float32"),
        predicted_label_index=1,
    )


def test_a_pruned_models_heads_keep_their_numbers_and_the_mean_leaves_out_the_removed(
    browser, tmp_path
):
    path = write_viewer(
        tmp_path,
        [pruned_record()],
        CLASS_NAMES,
        meta={"kept_heads": [[0, 2]]},
        heads={
            **HEADS,
            "heads": [head for head in HEADS["heads"] if head["layer"] == 0 and head["head"] != 1],
        },
    )
    with open_viewer(browser, path) as (page, problems, _, _):
        assert page.locator("#head-select option").all_text_contents() == [
            "mean of heads",
            "head 0",
            "head 2",
        ]
        assert page.locator("#model-view .thumbnail").evaluate_all(
            "(cells) => cells.map(c => c.dataset.head)"
        ) == ["0", "2"]
        assert page.locator("#model-view .pruned").get_attribute("title") == (
            "layer 0, head 1: pruned (removed from the model)"
        )
        assert page.locator("#heads-grid > div").all_text_contents() == [
            "0.0000",
            "pruned",
            "0.0200",
        ]
        assert (
            page.locator("#model-view-note").text_content().startswith("Hatched heads were pruned")
        )
        # The mean of heads 0 and 2: (1 + 0.6) / 2, not (1 + 0 + 0.6) / 3.
        box = page.locator("#heatmap").bounding_box()
        margin, cell = (
            float(page.evaluate(f"document.getElementById('heatmap').dataset.{name}"))
            for name in ("margin", "cell")
        )
        page.mouse.move(box["x"] + margin + 0.5 * cell, box["y"] + margin + 0.5 * cell)
        assert page.locator("#status").text_content() == 'query 0 "good" -> key 0 "good": 0.8000'
        page.mouse.move(box["x"] + margin + 1.5 * cell, box["y"] + margin + 0.5 * cell)
        assert page.locator("#status").text_content() == 'query 0 "good" -> key 1 "film": 0.2000'
        assert problems == []
