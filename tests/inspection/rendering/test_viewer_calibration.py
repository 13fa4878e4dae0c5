"""The Dataset panel's calibration part in headless Chromium (viewer_calibration.js): the
reliability diagram and the coverage curve, from the calibration.json an evaluation wrote
(`engine.calibration.reports`) through the export's block."""

import json

import numpy as np
import pytest

from engine.calibration import scaled
from engine.calibration.reports import write_calibration_reports
from engine.evaluation.dataset_panel import dataset_block
from inspection.rendering.viewer import write_viewer
from tests.helpers import CLASS_NAMES, make_records
from tests.inspection.viewer_browser import open_viewer

# CALIBRATION_PLOT of viewer_calibration.js: [0, 1] over x 44 to 290 and y 220 to 10.
X0, X1, Y0, Y1 = 44.0, 290.0, 220.0, 10.0


def write_evaluation(run_dir, temperature):
    """An evaluated test split: 2000 texts of 2 classes, an overconfident model scaled by
    `temperature` (None: not calibrated)."""
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2000, 2)) * 3
    truth = scaled(np.exp(logits), 2.0)  # the truth is twice softer than the raw model
    labels = (rng.random(2000) < truth[:, 1]).astype(int)
    probabilities = scaled(np.exp(logits), temperature or 1.0)
    folder = run_dir / "eval" / "test"
    folder.mkdir(parents=True)
    write_calibration_reports(folder, labels, probabilities, temperature)
    return json.loads((folder / "calibration.json").read_text())


@pytest.mark.parametrize("temperature", [2.0, None])
def test_the_reliability_diagram_and_coverage_curve_are_drawn(browser, tmp_path, temperature):
    written = write_evaluation(tmp_path / "run", temperature)
    block = dataset_block(tmp_path / "run", "test")
    assert block["calibration"]["ece"] == pytest.approx(written["ece"], abs=1e-3)
    path = write_viewer(tmp_path / "viewer", make_records(), CLASS_NAMES, dataset=block)
    with open_viewer(browser, path) as (page, problems, _, _):
        assert page.locator("#calibration-part").is_visible()
        summary = page.locator("#calibration-summary").text_content()
        assert f"expected calibration error {written['ece']:.3f}" in summary
        after = written["bins"]["after"]
        dots = page.locator("#reliability-plot circle.bin.after")
        assert dots.count() == len(after)
        first = dots.first
        x, y = (float(first.get_attribute(name)) for name in ("cx", "cy"))
        assert x == pytest.approx(X0 + after[0]["confidence"] * (X1 - X0), abs=0.2)
        assert y == pytest.approx(Y0 - after[0]["accuracy"] * (Y0 - Y1), abs=0.2)
        before = page.locator("#reliability-plot circle.bin.before").count()
        if temperature is None:
            assert before == 0 and "(not calibrated)" in summary
        else:
            assert before == len(written["bins"]["before"])
            assert f"{written['ece_before']:.3f} before the temperature 2 fitted" in summary
            assert written["ece"] < written["ece_before"]  # scaled back to the truth's
        curve = page.locator("#coverage-plot path.coverage-line").get_attribute("d")
        assert curve.count("L") + 1 == len(written["coverage"])
        assert problems == []
