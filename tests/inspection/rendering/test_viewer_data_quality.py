"""The Dataset panel's data quality parts in headless Chromium (viewer_data_quality.js): the
training data map as a scatter with a tooltip, and the weak slices table, from the files a
run's eval/ folder holds (tests/data_quality_fixture.py) through the export's block."""

import pytest

from engine.evaluation.dataset_panel import dataset_block
from inspection.rendering.viewer import write_viewer
from tests.data_quality_fixture import HOSTILE_TEXT, LONG_TEXT, write_data_quality_files
from tests.helpers import CLASS_NAMES, make_records
from tests.inspection.viewer_browser import open_viewer

# The plot's axes: variability 0 to 0.5 over x 52 to 506, confidence 0 to 1 over y 294
# to 12 (MAP_PLOT of viewer_data_quality.js).
X_AXIS = {"0.0": 52.0, "0.5": 506.0}
Y_AXIS = {"0.0": 294.0, "1.0": 12.0}


@pytest.fixture
def quality_viewer(browser, tmp_path):
    """The page of an export of the test split, the run having a data map and slices."""
    block = dataset_block(write_data_quality_files(tmp_path / "run"), "test")
    with open_viewer(
        browser, write_viewer(tmp_path / "viewer", make_records(), CLASS_NAMES, dataset=block)
    ) as opened:
        yield opened


def dot(page, position):
    return page.locator(f'#data-map circle.point[data-position="{position}"]')


def test_the_data_map_draws_one_dot_per_point_where_its_axes_put_it(quality_viewer):
    page, problems, requests, _ = quality_viewer
    assert page.locator("#dataset-section").is_visible()
    assert page.locator("#data-map-part").is_visible()
    assert not page.locator("#dataset-tokens").is_visible()  # no tokens.json
    assert page.locator("#data-map-regions .region").all_text_contents() == [
        "easy-to-learn 62%",
        "ambiguous 27%",
        "hard-to-learn 11%",
    ]
    summary = page.locator("#data-map-summary").text_content()
    assert "of the 8530 training examples over 3 epochs" in summary
    assert "4 drawn: a sample and the 2 listed suspects" in summary
    # One dot per point (the unseen one was left out), suspects last and ringed.
    assert page.locator("#data-map circle.point").evaluate_all(
        "(dots) => dots.map((dot) => dot.dataset.position)"
    ) == ["12", "7", "40", "99"]
    ticks = {
        axis: {
            value: float(
                page.locator(f'#data-map line.tick.{axis}[data-value="{value}"]').get_attribute(
                    "x1" if axis == "x" else "y1"
                )
            )
            for value in expected
        }
        for axis, expected in (("x", X_AXIS), ("y", Y_AXIS))
    }
    assert ticks == {"x": X_AXIS, "y": Y_AXIS}
    # "dull and far too long": variability 0.3, confidence 0.55.
    expected_x = X_AXIS["0.0"] + 0.3 / 0.5 * (X_AXIS["0.5"] - X_AXIS["0.0"])
    expected_y = Y_AXIS["0.0"] + 0.55 * (Y_AXIS["1.0"] - Y_AXIS["0.0"])
    assert (expected_x, expected_y) == pytest.approx((324.4, 138.9))
    assert float(dot(page, 7).get_attribute("cx")) == pytest.approx(expected_x, abs=0.01)
    assert float(dot(page, 7).get_attribute("cy")) == pytest.approx(expected_y, abs=0.01)
    # Colour by correctness: always right is viridis' light end, never right its dark end.
    assert dot(page, 12).get_attribute("fill") == "rgb(253, 231, 37)"
    assert dot(page, 40).get_attribute("fill") == "rgb(68, 1, 84)"
    assert page.locator("#data-map-legend .legend-row").count() == 6
    strokes = {
        position: dot(page, position).evaluate(
            "(node) => [getComputedStyle(node).stroke, node.getAttribute('r')]"
        )
        for position in (12, 7, 40, 99)
    }
    assert strokes == {
        12: ["none", "3"],
        7: ["none", "3"],
        40: ["rgb(255, 59, 48)", "4.5"],
        99: ["rgb(255, 59, 48)", "4.5"],
    }
    assert problems == [] and all(url.startswith(("file:", "data:")) for url in requests)


def test_hovering_a_dot_shows_its_text_and_numbers_and_a_hostile_text_stays_text(quality_viewer):
    page, problems, _, dialogs = quality_viewer
    tooltip = page.locator("#data-map-tooltip")
    assert not tooltip.is_visible()
    dot(page, 12).hover()
    assert tooltip.is_visible()
    assert tooltip.locator("div").all_text_contents() == [
        "a wonderful, moving film",
        "label positive | model positive",
        "confidence 0.912 | variability 0.050 | correctness 1.000",
        "training example 12",
    ]
    dot(page, 40).hover()
    assert tooltip.locator(".tooltip-text").text_content() == HOSTILE_TEXT
    assert tooltip.locator("div").all_text_contents()[1:] == [
        "label positive | model negative",
        "confidence 0.120 | variability 0.080 | correctness 0.000",
        "training example 40 | suspect 1",
    ]
    assert page.locator("#dataset-section img").count() == 0
    dot(page, 99).hover()
    assert tooltip.locator(".tooltip-text").text_content() == LONG_TEXT[:300]
    page.mouse.move(1, 1)
    assert not tooltip.is_visible()
    assert page.evaluate("window.pwned") is None
    assert problems == [] and dialogs == []


def test_the_weak_slices_table_lists_each_slice_against_the_overall_accuracy(quality_viewer):
    page, problems, _, dialogs = quality_viewer
    assert page.locator("#slices-part").is_visible()
    assert page.locator("#slices-summary").text_content() == (
        "3 weak of the 5 slices of 1066 examples of test, overall accuracy 0.850 (the green line)."
    )
    table = page.locator("#slices-table")
    assert table.locator(".dataset-head").all_text_contents() == [
        "slice",
        "kind",
        "size",
        "accuracy [interval]",
        "",
    ]
    assert table.locator(".slice-name").all_text_contents() == [
        "word: zqxv",
        "length: over 40 words",
        f"word: {HOSTILE_TEXT}",
    ]
    assert table.locator(".dataset-count").all_text_contents() == ["40", "120", "25"]
    assert table.locator(".dataset-value").all_text_contents() == [
        "0.200 [0.100, 0.350]",
        "0.612 [0.520, 0.700]",
        "0.400 [0.220, 0.600]",
    ]
    # The first bar: accuracy 0.2 from 0, the whisker over [0.1, 0.35], the line at 0.85.
    bar = table.locator(".slice-bar").first
    assert bar.get_attribute("title") == "0.200 [0.100, 0.350]; overall 0.850"
    spans = bar.evaluate(
        "(box) => { const outer = box.getBoundingClientRect(); "
        "return [...box.children].map((part) => { "
        "const inner = part.getBoundingClientRect(); "
        "return [(inner.left - outer.left) / outer.width, "
        "inner.width / outer.width]; }); }"
    )
    assert spans[0] == pytest.approx([0.0, 0.2], abs=0.005)
    assert spans[1] == pytest.approx([0.1, 0.25], abs=0.005)
    assert spans[2][0] == pytest.approx(0.85, abs=0.005)
    assert (
        page.locator("#slices-correction")
        .text_content()
        .startswith("Bonferroni over 5 candidate slices")
    )
    assert page.evaluate("window.pwned") is None
    assert problems == [] and dialogs == []


def test_the_panel_shows_only_the_parts_the_run_has(browser, tmp_path):
    # Slices without a weak one, and no data map: the validation export's.
    run_dir = write_data_quality_files(
        tmp_path / "run", data_map=False, slice_splits=("validation",)
    )
    path = write_viewer(
        tmp_path / "viewer",
        make_records(),
        CLASS_NAMES,
        dataset=dataset_block(run_dir, "validation"),
    )
    with open_viewer(browser, path) as (page, problems, _, _):
        assert page.locator("#slices-part").is_visible()
        assert not page.locator("#data-map-part").is_visible()
        assert not page.locator("#dataset-tokens").is_visible()
        assert page.locator("#slices-summary").text_content() == (
            "No weak slice: none of the 2 slices of 1066 examples of validation, overall "
            "accuracy 0.850, was found weak."
        )
        assert page.locator("#slices-table > *").count() == 0
        assert page.locator("#slices-correction").text_content().startswith("Bonferroni")
        assert problems == []
