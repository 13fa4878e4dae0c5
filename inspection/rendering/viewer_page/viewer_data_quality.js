// The Dataset panel's data quality parts, each shown when the run measured it:
// - the training data map (Data Cartography, Swayamdipta et al. 2020; the run's
//   eval/train/data_map.json, `evaluate.py --suspects`): one dot per example drawn, x its
//   variability, y its confidence, colour the share of epochs it was right, the suspects
//   ringed; hovering a dot shows its text, labels and numbers;
// - the weak slices (a split's slices.json, `evaluate.py --slices`): per slice its
//   accuracy and interval against the overall accuracy, then the correction applied.
// Drawn by hand in SVG: the page loads no library. Inlined after viewer_dataset.js; text
// only through textContent (the texts are the dataset's, anything at all).

// The plot's size and margins (px); variability is a standard deviation of values in
// [0, 1], so at most 0.5.
const MAP_PLOT = { width: 520, height: 340, left: 52, right: 14, top: 12, bottom: 46 };
const MAX_VARIABILITY = 0.5;
const CORRECTNESS_BINS = 5;

function svgElement(tag, attributes, className) {
  const node = document.createElementNS(SVG_NS, tag);
  Object.entries(attributes).forEach(([name, value]) => node.setAttribute(name, String(value)));
  if (className) node.setAttribute("class", className);
  return node;
}

function mapX(variability) {
  const clamped = Math.min(Math.max(variability, 0), MAX_VARIABILITY);
  return MAP_PLOT.left + (clamped / MAX_VARIABILITY) *
    (MAP_PLOT.width - MAP_PLOT.left - MAP_PLOT.right);
}

function mapY(confidence) {
  const clamped = Math.min(Math.max(confidence, 0), 1);
  return MAP_PLOT.top + (1 - clamped) * (MAP_PLOT.height - MAP_PLOT.top - MAP_PLOT.bottom);
}

// Bins of equal width over [0, 1], the last one closed; coloured from viridis' dark end
// (never right) to its light end (always right).
function correctnessBin(correctness) {
  const bin = Math.floor(correctness * CORRECTNESS_BINS);
  return Math.min(CORRECTNESS_BINS - 1, Math.max(0, bin));
}

function binColour(bin) { return `rgb(${viridis(bin / (CORRECTNESS_BINS - 1)).join(", ")})`; }

function drawMapAxes(svg) {
  const right = MAP_PLOT.width - MAP_PLOT.right, bottom = MAP_PLOT.height - MAP_PLOT.bottom;
  for (let step = 0; step <= 5; step++) {
    const value = step / 10, x = mapX(value);
    svg.append(svgElement("line", { x1: x, y1: MAP_PLOT.top, x2: x, y2: bottom }, "grid"),
      svgElement("line", { x1: x, y1: bottom, x2: x, y2: bottom + 5, "data-value":
        value.toFixed(1) }, "tick x"));
    const label = svgElement("text", { x, y: bottom + 17, "text-anchor": "middle" });
    label.textContent = value.toFixed(1);
    svg.appendChild(label);
  }
  for (let step = 0; step <= 5; step++) {
    const value = step / 5, y = mapY(value);
    svg.append(svgElement("line", { x1: MAP_PLOT.left, y1: y, x2: right, y2: y }, "grid"),
      svgElement("line", { x1: MAP_PLOT.left - 5, y1: y, x2: MAP_PLOT.left, y2: y,
        "data-value": value.toFixed(1) }, "tick y"));
    const label = svgElement("text", { x: MAP_PLOT.left - 8, y: y + 4, "text-anchor": "end" });
    label.textContent = value.toFixed(1);
    svg.appendChild(label);
  }
  svg.appendChild(svgElement("rect", { x: MAP_PLOT.left, y: MAP_PLOT.top,
    width: right - MAP_PLOT.left, height: bottom - MAP_PLOT.top }, "frame"));
  const xLabel = svgElement("text", { x: (MAP_PLOT.left + right) / 2, y: MAP_PLOT.height - 6,
    "text-anchor": "middle" }, "axis-label");
  xLabel.textContent = "variability (spread of p(label) over the epochs)";
  const middle = (MAP_PLOT.top + bottom) / 2;
  const yLabel = svgElement("text", { x: 14, y: middle, "text-anchor": "middle",
    transform: `rotate(-90 14 ${middle})` }, "axis-label");
  yLabel.textContent = "confidence (mean p(label))";
  svg.append(xLabel, yLabel);
}

function drawMapLegend() {
  const legend = byId("data-map-legend");
  clear(legend);
  legend.appendChild(element("b", "epochs right"));
  for (let bin = CORRECTNESS_BINS - 1; bin >= 0; bin--) {
    const row = element("div", null, "legend-row");
    const swatch = element("span", null, "legend-swatch");
    swatch.style.background = binColour(bin);
    const low = bin / CORRECTNESS_BINS, high = (bin + 1) / CORRECTNESS_BINS;
    row.append(swatch, element("span", `${(100 * low).toFixed(0)}-${(100 * high).toFixed(0)}%`));
    legend.appendChild(row);
  }
  const suspect = element("div", null, "legend-row");
  suspect.append(element("span", null, "legend-swatch suspect"),
    element("span", "suspect label"));
  legend.appendChild(suspect);
}

function showMapTooltip(point, dot) {
  const tooltip = byId("data-map-tooltip");
  clear(tooltip);
  tooltip.append(
    element("div", point.text, "tooltip-text"),
    element("div", `label ${point.label} | model ${point.model_label}`),
    element("div", `confidence ${point.confidence.toFixed(3)} | variability ` +
      `${point.variability.toFixed(3)} | correctness ${point.correctness.toFixed(3)}`,
      "tooltip-numbers"),
    element("div", `training example ${point.position}` + (point.suspect_rank === null ?
      "" : ` | suspect ${point.suspect_rank}`), "tooltip-numbers"));
  const box = byId("data-map-box").getBoundingClientRect();
  const spot = dot.getBoundingClientRect();
  tooltip.style.left = `${spot.right - box.left + 8}px`;
  tooltip.style.top = `${spot.bottom - box.top + 8}px`;
  tooltip.hidden = false;
  dot.classList.add("active");
}

function hideMapTooltip(dot) {
  byId("data-map-tooltip").hidden = true;
  dot.classList.remove("active");
}

function setupDataMap(map) {
  byId("data-map-tooltip").hidden = true;
  const regions = byId("data-map-regions");
  clear(regions);
  Object.entries(map.regions).forEach(([region, share]) => {
    const item = element("span", null, "region");
    item.append(element("b", region), ` ${(100 * share).toFixed(0)}%`);
    regions.appendChild(item);
  });
  const suspects = map.points.filter((point) => point.suspect_rank !== null).length;
  byId("data-map-summary").textContent =
    `Shares of the ${map.examples} training examples over ${map.epochs} epochs; ` +
    `${map.region_rule.replace(/\.$/, "")}. Each dot is one example (${map.points.length} drawn: a sample ` +
    `and the ${suspects} listed suspects, ringed in red). Hover a dot for its text.`;
  const svg = byId("data-map");
  clear(svg);
  svg.setAttribute("width", String(MAP_PLOT.width));
  svg.setAttribute("height", String(MAP_PLOT.height));
  drawMapAxes(svg);
  // Suspects last, so that their rings lie on top.
  const order = map.points.map((point, index) => index).sort((first, second) =>
    (map.points[first].suspect_rank !== null) - (map.points[second].suspect_rank !== null));
  for (const index of order) {
    const point = map.points[index], suspect = point.suspect_rank !== null;
    const dot = svgElement("circle", { cx: mapX(point.variability).toFixed(2),
      cy: mapY(point.confidence).toFixed(2), r: suspect ? 4.5 : 3,
      fill: binColour(correctnessBin(point.correctness)), "data-index": index,
      "data-position": point.position }, suspect ? "point suspect" : "point");
    svg.appendChild(dot);
  }
  drawMapLegend();
}

// One listener for all dots, set once: a data map holds thousands, and the live lab draws
// another run's map in the same SVG.
function setupDataMapHover() {
  const svg = byId("data-map");
  svg.addEventListener("mouseover", (event) => {
    if (event.target.dataset && event.target.dataset.index !== undefined) {
      showMapTooltip(DATA.dataset.data_map.points[Number(event.target.dataset.index)],
                     event.target);
    }
  });
  svg.addEventListener("mouseout", (event) => {
    if (event.target.dataset && event.target.dataset.index !== undefined) {
      hideMapTooltip(event.target);
    }
  });
}

// A slice's accuracy (micro-F1 for label sets) from 0, its interval as a whisker and the
// overall value as a line, on a box from 0 to 1.
function sliceBar(entry, overall, metric) {
  const box = element("div", null, "slice-bar");
  const percent = (value) => `${(100 * Math.min(Math.max(value, 0), 1)).toFixed(2)}%`;
  const bar = element("div", null, "bar");
  bar.style.width = percent(entry[metric]);
  const whisker = element("div", null, "whisker");
  const [low, high] = entry[`${metric}_ci`];
  whisker.style.left = percent(low);
  whisker.style.width = `calc(${percent(high)} - ${percent(low)})`;
  const line = element("div", null, "overall");
  line.style.left = percent(overall);
  box.append(bar, whisker, line);
  box.title = `${metricText(entry, metric)}; overall ${overall.toFixed(3)}`;
  return box;
}

function metricText(entry, metric) {
  const [low, high] = entry[`${metric}_ci`];
  return `${entry[metric].toFixed(3)} [${low.toFixed(3)}, ${high.toFixed(3)}]`;
}

const METRIC_NAMES = { accuracy: "accuracy", micro_f1: "micro-F1" };

function setupSlices(slices) {
  const metric = slices.metric || "accuracy", name = METRIC_NAMES[metric];
  const weak = slices.weak_slices, overall = slices[metric];
  const measured = `${slices.candidates} slices of ${slices.examples} examples of ` +
    `${slices.split}, overall ${name} ${overall.toFixed(3)}`;
  byId("slices-summary").textContent = weak.length ?
    `${weak.length} weak of the ${measured} (the green line).` :
    `No weak slice: none of the ${measured}, was found weak.`;
  const table = byId("slices-table");
  clear(table);
  if (weak.length) {
    ["slice", "kind", "size", `${name} [interval]`, ""].forEach(
      (heading) => table.appendChild(element("div", heading, "dataset-head")));
  }
  weak.forEach((entry) => {
    table.append(element("div", entry.slice, "slice-name"), element("div", entry.kind),
      element("div", entry.size, "dataset-count"),
      element("div", metricText(entry, metric), "dataset-value"),
      sliceBar(entry, overall, metric));
  });
  byId("slices-correction").textContent = slices.correction;
}
