"use strict";
// Everything from the data goes into the page through textContent or setAttribute on
// inert attributes, never through innerHTML, so tokens cannot become markup.
const DATA = JSON.parse(document.getElementById("attention-data").textContent);
const SVG_NS = "http://www.w3.org/2000/svg";
const state = { example: 0, layer: 0, head: "mean", query: null, hoverQuery: null,
                method: DATA.default_method };
const decoded = new Map();
// Labels of [CLS] and [SEP], which are no words of the text.
const SPECIAL_COLOUR = "#7a5af5";
// Viridis, sampled at nine points and interpolated.
const VIRIDIS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
                 [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37]];

function byId(id) { return document.getElementById(id); }

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

function viridis(value) {
  const position = Math.min(Math.max(value, 0), 1) * (VIRIDIS.length - 1);
  const low = Math.floor(position), high = Math.min(low + 1, VIRIDIS.length - 1);
  const fraction = position - low;
  return VIRIDIS[low].map((channel, index) =>
    Math.round(channel + (VIRIDIS[high][index] - channel) * fraction));
}

// Weights of one example as a Float32Array (layers, heads, T, T), dequantized once.
function weights(exampleIndex) {
  if (decoded.has(exampleIndex)) return decoded.get(exampleIndex);
  const example = DATA.examples[exampleIndex];
  const bytes = atob(example.attention);
  const size = example.tokens.length * example.tokens.length;
  const values = new Float32Array(bytes.length);
  for (let index = 0; index < bytes.length; index++) {
    const matrix = Math.floor(index / size);
    const layer = Math.floor(matrix / example.num_heads), head = matrix % example.num_heads;
    values[index] = bytes.charCodeAt(index) * example.scales[layer][head];
  }
  decoded.set(exampleIndex, values);
  return values;
}

// The T x T matrix on screen: one head, or the mean of the layer's heads; of a pruned
// model, the heads it kept, never the empty maps of the removed ones.
function currentMatrix() {
  const example = DATA.examples[state.example];
  const count = example.tokens.length, size = count * count;
  const values = weights(state.example);
  const heads = state.head === "mean" ? DATA.kept_heads[state.layer] : [state.head];
  const matrix = new Float32Array(size);
  for (const head of heads) {
    const offset = (state.layer * example.num_heads + head) * size;
    for (let index = 0; index < size; index++) {
      matrix[index] += values[offset + index] / heads.length;
    }
  }
  return matrix;
}

function fillSelect(select, options, selected) {
  clear(select);
  options.forEach(([value, label]) => {
    const option = element("option", label);
    option.value = String(value);
    select.appendChild(option);
  });
  select.value = String(selected);
}

function shorten(text, length) {
  return text.length > length ? text.slice(0, length - 1) + "\u2026" : text;
}

function renderLabels() {
  const example = DATA.examples[state.example];
  const trueLabel = byId("true-label"), predicted = byId("predicted-label");
  trueLabel.textContent = example.true_label === null ? "unknown" : example.true_label;
  predicted.textContent = example.predicted_label;
  predicted.className = example.true_label === null ? "" :
    (example.true_label === example.predicted_label ? "correct" : "wrong");
  const box = byId("probabilities");
  clear(box);
  DATA.class_names.forEach((name, index) => {
    const probability = example.probabilities[index];
    const row = element("div", null, "prob-row");
    row.appendChild(element("span", shorten(name, 18)));
    const bar = element("div", null, "prob-bar");
    const fill = element("div");
    fill.style.width = (100 * probability).toFixed(1) + "%";
    bar.appendChild(fill);
    row.appendChild(bar);
    row.appendChild(element("span", probability.toFixed(4)));
    box.appendChild(row);
  });
  byId("text").textContent = example.text;
}

function isSpecial(example, index) { return example.word_index[index] === null; }

// A token as the model read it, for labels: a special token keeps its brackets.
function tokenLabel(example, index) {
  const word = example.word_index[index];
  if (word === null) return example.tokens[index];
  const whole = example.words[word];
  return whole === example.tokens[index] ? whole : `${example.tokens[index]} (${whole})`;
}

function renderRun() {
  const meta = Object.assign({}, DATA.meta);
  delete meta.kept_heads;  // The model view shows which heads the model has.
  if (!DATA.live) meta.examples_in_viewer = DATA.examples.length;
  byId("run").textContent = JSON.stringify(meta, null, 2);
}

function renderAll() {
  document.body.dataset.view = `${state.example}:${state.layer}:${state.head}`;
  renderLabels();
  renderQueryViews();
  renderModelView();
}

// Layers and heads count from 0, as in heads.json and compress.json. A pruned model's
// removed heads are not offered; the model view shows where they were.
function fillLayersAndHeads() {
  const example = DATA.examples[state.example];
  state.layer = Math.min(state.layer, example.num_layers - 1);
  const kept = DATA.kept_heads[state.layer];
  if (!kept.includes(state.head)) state.head = "mean";
  fillSelect(byId("layer-select"), [...Array(example.num_layers).keys()].map(
    (layer) => [layer, `layer ${layer}`]), state.layer);
  fillSelect(byId("head-select"), [["mean", "mean of heads"]].concat(
    kept.map((head) => [head, `head ${head}`])), state.head);
}

// Shows one head of a layer ("mean": all its heads) in the heatmap and the lines.
function selectHead(layer, head) {
  if (DATA.examples.length === 0) return;
  state.layer = layer;
  state.head = head;
  fillLayersAndHeads();
  renderAll();
}

// The listeners, once; then the page is drawn from DATA, or by the live lab
// (viewer_live.js) from its first run.
function setup() {
  byId("example-select").addEventListener("change", (event) => {
    state.example = Number(event.target.value);
    state.query = null;
    state.hoverQuery = null;
    fillLayersAndHeads();
    renderAll();
  });
  byId("layer-select").addEventListener("change", (event) => {
    selectHead(Number(event.target.value), state.head);
  });
  byId("head-select").addEventListener("change", (event) => {
    selectHead(state.layer, event.target.value === "mean" ? "mean" : Number(event.target.value));
  });
  const canvas = byId("heatmap");
  canvas.addEventListener("mousemove", (event) => {
    const hit = heatmapCell(event);
    const example = DATA.examples[state.example];
    if (!hit) { byId("status").textContent = ""; return; }
    const weight = currentMatrix()[hit.query * example.tokens.length + hit.key];
    byId("status").textContent =
      `query ${hit.query} "${tokenLabel(example, hit.query)}" -> key ${hit.key} ` +
      `"${tokenLabel(example, hit.key)}": ${weight.toFixed(4)}`;
  });
  canvas.addEventListener("click", (event) => {
    const hit = heatmapCell(event);
    if (hit) selectQuery(hit.query);
  });
  setupMethods();
  setupHeads();
  setupDataset();
  if (DATA.live) setupLive();
  else showData();
}

// Draws the page from DATA as it is now. The live lab replaces the examples, methods,
// `signed`, class names, kept heads, heads and dataset, then calls it again: what was
// decoded or drawn of the examples before is dropped. `panels` false keeps the heads and
// Dataset panels as they are (a new answer of the same run: their selects stay put).
function showData(panels = true) {
  decoded.clear();
  delete byId("model-view").dataset.example;
  Object.assign(state, { example: 0, query: null, hoverQuery: null });
  if (!DATA.methods.includes(state.method)) state.method = DATA.default_method;
  renderRun();
  if (panels) {
    showHeads();
    showDataset();
  }
  if (DATA.examples.length === 0 && DATA.live) {
    clearExample();
    return;
  }
  if (DATA.examples.length === 0) {
    byId("status").textContent = "This export has no examples.";
    return;
  }
  fillSelect(byId("example-select"), DATA.examples.map((example, index) => [index,
    `${example.id} | true ${example.true_label === null ? "?" : example.true_label} | ` +
    `predicted ${example.predicted_label} | ${shorten(example.text, 50)}`]), 0);
  fillLayersAndHeads();
  fillMethods();
  renderMethod();
  renderAll();
}

// The example's views, empty: the live lab's before its first answer and after a run
// switch (an export without examples never drew them).
function clearExample() {
  ["example-select", "layer-select", "head-select", "true-label", "predicted-label",
   "probabilities", "text", "rollout", "rollout-note", "model-view", "model-view-note",
   "lines"].forEach((id) => clear(byId(id)));
  byId("heatmap").width = 0;
  byId("heatmap").height = 0;
  byId("status").textContent = "";
  delete document.body.dataset.view;
}

// Once the whole script ran: the files inlined after this one may declare constants, which
// do not exist before their line is reached.
document.addEventListener("DOMContentLoaded", setup);
