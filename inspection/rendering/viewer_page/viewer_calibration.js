// The Dataset panel's calibration part (a split's calibration.json, written by every
// evaluation, docs/evaluation.md): the reliability diagram (per confidence bin, the
// accuracy against the mean confidence, before and after the run's temperature, the
// diagonal being perfect calibration) and the coverage curve (the accuracy of the texts
// kept when the model abstains below each threshold of its top probability). Drawn by
// hand in SVG (svgElement is viewer_data_quality.js'); text only through textContent.

const CALIBRATION_PLOT = { width: 300, height: 260, left: 44, right: 10, top: 10, bottom: 40 };

function calibrationX(value) {
  const inner = CALIBRATION_PLOT.width - CALIBRATION_PLOT.left - CALIBRATION_PLOT.right;
  return CALIBRATION_PLOT.left + Math.min(Math.max(value, 0), 1) * inner;
}

function calibrationY(value) {
  const inner = CALIBRATION_PLOT.height - CALIBRATION_PLOT.top - CALIBRATION_PLOT.bottom;
  return CALIBRATION_PLOT.top + (1 - Math.min(Math.max(value, 0), 1)) * inner;
}

// A square plot of [0, 1] x [0, 1]: frame, ticks every 0.2, the axis names.
function drawCalibrationAxes(svg, xName, yName) {
  const bottom = CALIBRATION_PLOT.height - CALIBRATION_PLOT.bottom;
  for (let step = 0; step <= 5; step++) {
    const value = step / 5;
    const below = svgElement("text", { x: calibrationX(value), y: bottom + 14,
      "text-anchor": "middle" });
    const left = svgElement("text", { x: CALIBRATION_PLOT.left - 6, y: calibrationY(value) + 4,
      "text-anchor": "end" });
    below.textContent = left.textContent = value.toFixed(1);
    svg.append(below, left);
  }
  svg.appendChild(svgElement("rect", { x: calibrationX(0), y: calibrationY(1),
    width: calibrationX(1) - calibrationX(0), height: calibrationY(0) - calibrationY(1) },
    "frame"));
  const xLabel = svgElement("text", { x: (calibrationX(0) + calibrationX(1)) / 2,
    y: CALIBRATION_PLOT.height - 6, "text-anchor": "middle" }, "axis-label");
  const middle = (calibrationY(0) + calibrationY(1)) / 2;
  const yLabel = svgElement("text", { x: 12, y: middle, "text-anchor": "middle",
    transform: `rotate(-90 12 ${middle})` }, "axis-label");
  xLabel.textContent = xName;
  yLabel.textContent = yName;
  svg.append(xLabel, yLabel);
}

function calibrationLine(points, x, y, className) {
  const path = points.map((point, index) =>
    `${index ? "L" : "M"}${calibrationX(point[x]).toFixed(1)},${calibrationY(point[y]).toFixed(1)}`);
  return svgElement("path", { d: path.join(" ") }, className);
}

function drawReliability(calibration) {
  const svg = byId("reliability-plot");
  clear(svg);
  drawCalibrationAxes(svg, `confidence (${calibration.subject})`, "accuracy");
  svg.appendChild(calibrationLine([{ c: 0, a: 0 }, { c: 1, a: 1 }], "c", "a", "diagonal"));
  const shown = calibration.temperature === null ? ["after"] : ["before", "after"];
  shown.forEach((name) => {
    const bins = calibration.bins[name];
    svg.appendChild(calibrationLine(bins, "confidence", "accuracy", `reliability ${name}`));
    bins.forEach((bin) => svg.appendChild(svgElement("circle", { cx: calibrationX(bin.confidence),
      cy: calibrationY(bin.accuracy), r: 3, "data-count": bin.count }, `bin ${name}`)));
  });
}

function drawCoverage(coverage) {
  const svg = byId("coverage-plot");
  clear(svg);
  drawCalibrationAxes(svg, "coverage (share answered)", "accuracy of those answered");
  svg.appendChild(calibrationLine(coverage, "coverage", "accuracy", "coverage-line"));
}

function setupCalibration(calibration) {
  const scaled = calibration.temperature !== null;
  byId("calibration-summary").textContent =
    `On ${calibration.split}: expected calibration error ${calibration.ece.toFixed(3)}` +
    (scaled ? ` (${calibration.ece_before.toFixed(3)} before the temperature ` +
      `${JSON.stringify(calibration.temperature)} fitted on validation)` : " (not calibrated)") +
    `, Brier score ${calibration.brier.toFixed(3)}. Dots: bins of the ${calibration.subject}` +
    (scaled ? "; grey before, blue after." : ".");
  drawReliability(calibration);
  byId("coverage-plot").hidden = !calibration.coverage;
  if (calibration.coverage) drawCoverage(calibration.coverage);
}
