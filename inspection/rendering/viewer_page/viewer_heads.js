// The model's heads at a glance. The model view (BertViz's): every layer x head of the
// chosen example as a thumbnail; a click opens it in the heatmap; with the run's heads.json
// each border says how much the head matters. The heads panel: heads.json's numbers per
// layer x head across a split, one measure at a time. Inlined after viewer.js into its
// (strict) script, which calls setupHeads(), showHeads() and renderModelView(): function
// declarations only, so they exist when viewer.js's setup() runs. Text only through
// textContent.

// Per measure of heads.json: its label, what it means (docs/heads.md), its digits, and the
// factor it is shown with (the accuracy drop in points, as heads.md has it).
function measureInfo(measure) {
  const share = (what) => `share of attention on ${what}, averaged over real tokens`;
  const known = {
    importance: ["importance", "Michel et al. (2019): |dL / d head mask|; the higher, the " +
      "more the loss moves with the head", 4, 1],
    ablation_accuracy_drop: ["accuracy drop (points)", "accuracy lost when this head alone " +
      "is switched off", 2, 100],
    ablation_loss_increase: ["loss increase", "mean loss gained when this head alone is " +
      "switched off", 4, 1],
    to_cls: ["to the class token", share("the class token ([CLS], <s>)"), 2, 1],
    to_sep: ["to the separator", share("the separator ([SEP], </s>)"), 2, 1],
    to_punctuation: ["to punctuation", share("punctuation"), 2, 1],
    to_self: ["to itself", share("the token itself"), 2, 1],
    to_previous: ["to the previous token", share("the token before"), 2, 1],
    to_next: ["to the next token", share("the token after"), 2, 1],
    mean_distance: ["mean distance", "expected distance in tokens from a query to the keys " +
      "it attends to", 2, 1],
    entropy: ["entropy", "each row's entropy over log(real tokens): 1 uniform, 0 one key",
      2, 1],
  };
  const [label, description, digits, factor] = known[measure] || [measure, "", 3, 1];
  return { label, description, digits, factor };
}

// A head's number of `measure`, null when it was not measured (heads.json writes no NaN).
function measuredValue(entry, measure) {
  return entry && typeof entry[measure] === "number" ? entry[measure] : null;
}

// The measured heads by "layer:head"; empty without heads.json.
function measuredHeads() {
  return new Map((DATA.heads ? DATA.heads.heads : []).map(
    (head) => [`${head.layer}:${head.head}`, head]));
}

function isKeptHead(layer, head) {
  return layer < DATA.kept_heads.length && DATA.kept_heads[layer].includes(head);
}

// Layers and heads of the grids: the maps', or heads.json's when no example is embedded.
function gridShape() {
  const measured = DATA.heads ? DATA.heads.heads : [];
  const example = DATA.examples[0];
  return {
    layers: Math.max(DATA.kept_heads.length, ...measured.map((head) => head.layer + 1)),
    heads: Math.max(example ? example.num_heads : 0, ...measured.map((head) => head.head + 1)),
  };
}

// A layers x heads grid: a corner, one label per head, then per layer its label and the
// cells `cellOf(layer, head)` makes.
function fillHeadGrid(box, cellOf) {
  clear(box);
  const shape = gridShape();
  box.style.gridTemplateColumns = `auto repeat(${shape.heads}, max-content)`;
  box.appendChild(element("span"));
  for (let head = 0; head < shape.heads; head++) {
    box.appendChild(element("span", `head ${head}`, "axis"));
  }
  for (let layer = 0; layer < shape.layers; layer++) {
    const label = element("span", `layer ${layer}`, "axis row");
    label.dataset.layer = String(layer);
    box.appendChild(label);
    for (let head = 0; head < shape.heads; head++) box.appendChild(cellOf(layer, head));
  }
}

function prunedCell(layer, head, className) {
  const cell = element("div", "pruned", className);
  cell.setAttribute("title", `layer ${layer}, head ${head}: pruned (removed from the model)`);
  return cell;
}

// One map drawn at a pixel per weight, from 0 to its largest weight.
function drawThumbnail(canvas, values, offset, count) {
  canvas.width = Math.max(count, 1);
  canvas.height = Math.max(count, 1);
  if (count === 0) return;
  let largest = 0;
  for (let index = 0; index < count * count; index++) {
    largest = Math.max(largest, values[offset + index]);
  }
  const context = canvas.getContext("2d"), image = context.createImageData(count, count);
  for (let index = 0; index < count * count; index++) {
    const [red, green, blue] = viridis(values[offset + index] / (largest || 1));
    image.data.set([red, green, blue, 255], 4 * index);
  }
  context.putImageData(image, 0, 0);
}

// Grey for the least important head, deep orange for the most.
function importanceColour(value, largest) {
  const strength = Math.min(Math.max(value / (largest || 1), 0), 1);
  const grey = [221, 225, 232], orange = [232, 89, 12];
  const channels = grey.map((channel, index) =>
    Math.round(channel + (orange[index] - channel) * strength));
  return `rgb(${channels.join(", ")})`;
}

// The heads by importance, the most important first: [{layer, head, importance}].
function importanceRanking() {
  return [...measuredHeads().values()].filter((head) =>
    measuredValue(head, "importance") !== null && isKeptHead(head.layer, head.head))
    .sort((first, second) => second.importance - first.importance);
}

function thumbnail(layer, head, values, size, ranking) {
  const example = DATA.examples[state.example];
  if (!isKeptHead(layer, head)) return prunedCell(layer, head, "pruned");
  const cell = element("button", null, "thumbnail");
  cell.type = "button";
  cell.dataset.layer = String(layer);
  cell.dataset.head = String(head);
  const canvas = document.createElement("canvas");
  drawThumbnail(canvas, values, (layer * example.num_heads + head) * size,
                example.tokens.length);
  cell.appendChild(canvas);
  let title = `layer ${layer}, head ${head}: click to open it in the heatmap`;
  const rank = ranking.findIndex((entry) => entry.layer === layer && entry.head === head);
  if (rank >= 0) {
    const measured = ranking[rank];
    const numbers = ["ablation_accuracy_drop", "ablation_loss_increase"]
      .filter((name) => measuredValue(measured, name) !== null).map((name) => {
        const info = measureInfo(name);
        return `${info.label} ${(measured[name] * info.factor).toFixed(info.digits)}`;
      });
    cell.style.borderColor = importanceColour(measured.importance, ranking[0].importance);
    title += `\nimportance ${measured.importance.toFixed(4)}, rank ${rank + 1} of ` +
      `${ranking.length}` + (numbers.length ? `; ${numbers.join(", ")}` : "");
  }
  cell.setAttribute("title", title);
  cell.addEventListener("click", () => selectHead(layer, head));
  return cell;
}

// Draws the thumbnails when the example changes; marks the shown head on every call.
function renderModelView() {
  const box = byId("model-view");
  if (box.dataset.example !== String(state.example)) {
    const example = DATA.examples[state.example], ranking = importanceRanking();
    const values = weights(state.example), size = example.tokens.length ** 2;
    fillHeadGrid(box, (layer, head) => thumbnail(layer, head, values, size, ranking));
    box.dataset.example = String(state.example);
    renderModelViewNote(ranking);
  }
  for (const cell of box.querySelectorAll(".thumbnail")) {
    cell.classList.toggle("selected", Number(cell.dataset.layer) === state.layer &&
      Number(cell.dataset.head) === state.head);
  }
  for (const label of box.querySelectorAll(".axis.row")) {
    label.classList.toggle("selected", Number(label.dataset.layer) === state.layer);
  }
}

function renderModelViewNote(ranking) {
  const pruned = DATA.kept_heads.some((heads) => heads.length < gridShape().heads);
  let note = pruned ? "Hatched heads were pruned: the model no longer has them, and a layer's mean " +
      "leaves them out. " : "";
  if (ranking.length) {
    const top = ranking.slice(0, 3).map((head) => `layer ${head.layer} head ${head.head}`);
    note += `Borders: each head's importance on ${DATA.heads.examples} ${DATA.heads.split} ` +
      `examples, from grey (least) to orange (most); hover a head for its numbers. ` +
      `Most important: ${top.join(", ")}.`;
  } else if (pruned) {
    note += "Head importance is measured on the run this one was pruned from.";
  } else {
    note += "No head importance for this run: measure it with python evaluate.py " +
      `${(DATA.meta.run_info || {}).run_dir || "RUN_DIR"} --split validation --heads 500.`;
  }
  byId("model-view-note").textContent = note;
}

function setupHeads() { byId("heads-select").addEventListener("change", renderHeadsPanel); }

// The heads panel, shown only when the run has heads.json.
function showHeads() {
  byId("heads-section").hidden = !DATA.heads;
  if (!DATA.heads) return;
  const heads = DATA.heads, correlation = heads.spearman_importance_ablation;
  byId("heads-summary").textContent = `Measured by evaluate.py --heads on ${heads.examples} ` +
    `${heads.split} examples (${heads.source}). Spearman correlation of importance and ` +
    `the loss increase when a head alone is switched off: ` +
    `${correlation === null ? "n/a" : correlation.toFixed(2)}. Click a head to open it in ` +
    "the heatmap.";
  fillSelect(byId("heads-select"), heads.measures.map(
    (measure) => [measure, measureInfo(measure).label]), heads.measures[0]);
  renderHeadsPanel();
}

function renderHeadsPanel() {
  const measure = byId("heads-select").value, info = measureInfo(measure);
  const measured = measuredHeads(), shown = (head) => measuredValue(head, measure) * info.factor;
  const values = [...measured.values()].filter((head) => measuredValue(head, measure) !== null)
    .map(shown);
  const low = values.length ? Math.min(...values) : 0;
  const high = values.length ? Math.max(...values) : 1;
  const position = (value) => (value - low) / (high - low || 1);
  byId("heads-description").textContent = info.description;
  fillHeadGrid(byId("heads-grid"), (layer, head) => {
    if (!isKeptHead(layer, head)) return prunedCell(layer, head, "heads-cell missing");
    const entry = measured.get(`${layer}:${head}`);
    if (measuredValue(entry, measure) === null) {
      const cell = element("div", "n/a", "heads-cell missing");
      cell.setAttribute("title", `layer ${layer}, head ${head}: not measured`);
      return cell;
    }
    const value = shown(entry), text = value.toFixed(info.digits);
    const cell = element("div", text, "heads-cell");
    cell.style.background = `rgb(${viridis(position(value)).join(", ")})`;
    cell.style.color = position(value) < 0.6 ? "#ffffff" : "#1d2330";
    const description = `layer ${layer}, head ${head}: ${info.label} ${text}`;
    cell.setAttribute("title", description);
    cell.addEventListener("mouseenter", () => { byId("heads-status").textContent = description; });
    cell.addEventListener("click", () => selectHead(layer, head));
    return cell;
  });
  byId("heads-low").textContent = low.toFixed(info.digits);
  byId("heads-high").textContent = high.toFixed(info.digits);
  byId("heads-scale").style.background = "linear-gradient(to right, " + [0, 0.25, 0.5, 0.75, 1]
    .map((stop) => `rgb(${viridis(stop).join(", ")})`).join(", ") + ")";
  document.body.dataset.headsMeasure = measure;
}
