// The Dataset panel: per class, the words the model relies on across a split (the run's
// tokens.json, `evaluate.py --tokens`, docs/dataset_inspection.md). Per word its reliance
// (inserted into texts of other classes, the rise of the class's probability over random
// words', less its pull toward the other classes) with the 95% interval as a whisker, its
// insertion beside the random words', and its mean attribution; a shortcut (the training
// data ties the word strongly to the class and the model relies on it) is marked. A click on a word lists the embedded examples that contain it; a
// click on one of those opens it. Inlined after viewer.js; text only through textContent.

// A bar from 0 to `value` and a whisker over `bounds`, on a scale where `scale` is full.
function intervalBar(value, bounds, scale) {
  const box = element("div", null, "dataset-bar");
  const position = (number) => `${50 + 50 * Math.max(-1, Math.min(1, number / scale))}%`;
  const bar = element("div", null, value >= 0 ? "bar positive" : "bar negative");
  bar.style.left = value >= 0 ? "50%" : position(value);
  bar.style.width = `${Math.abs(50 * Math.min(1, Math.abs(value) / scale))}%`;
  const whisker = element("div", null, "whisker");
  whisker.style.left = position(bounds[0]);
  whisker.style.width = `calc(${position(bounds[1])} - ${position(bounds[0])})`;
  box.append(bar, whisker);
  box.title = `${value.toFixed(4)} [${bounds[0].toFixed(4)}, ${bounds[1].toFixed(4)}]`;
  return box;
}

// The embedded examples whose words include `word` (both are words as the model sees
// them: the same strings).
function examplesWith(word) {
  return DATA.examples.map((example, index) => [example, index]).filter(
    ([example]) => example.words.includes(word));
}

function renderDatasetExamples(word) {
  const box = byId("dataset-examples");
  clear(box);
  const found = examplesWith(word);
  box.appendChild(element("p", `"${word}" is in ${found.length} of the ` +
    `${DATA.examples.length} examples embedded in this page` +
    (found.length ? ": click one to open it." : "."), "hint"));
  found.forEach(([example, index]) => {
    const item = element("button", `${example.id} | true ${example.true_label === null ?
      "?" : example.true_label} | predicted ${example.predicted_label} | ` +
      shorten(example.text, 90), "dataset-example");
    item.addEventListener("click", () => {
      const select = byId("example-select");
      select.value = String(index);
      select.dispatchEvent(new Event("change"));
    });
    box.appendChild(item);
  });
}

function renderDataset() {
  const entries = DATA.dataset.classes[byId("dataset-class").value] || [];
  const table = byId("dataset-words");
  clear(table);
  ["word", "texts", "reliance [95% CI]", "", "insertion (random words)", "attribution",
   ""].forEach((heading) => table.appendChild(element("div", heading, "dataset-head")));
  const scale = Math.max(1e-12, ...entries.map(
    (entry) => Math.max(Math.abs(entry.reliance_ci[0]), Math.abs(entry.reliance_ci[1]))));
  const number = (value) => (value === null ? "-" : value.toFixed(3));
  entries.forEach((entry) => {
    const word = element("button", entry.word, "dataset-word");
    word.addEventListener("click", () => renderDatasetExamples(entry.word));
    table.append(word, element("div", entry.count, "dataset-count"),
      intervalBar(entry.reliance, entry.reliance_ci, scale),
      element("div", number(entry.reliance), "dataset-value"),
      element("div", `${number(entry.insertion)} (${number(entry.control)})`, "dataset-value"),
      element("div", number(entry.attribution), "dataset-value"),
      element("div", entry.shortcut ? "shortcut" : "", entry.shortcut ? "shortcut" : ""));
  });
  clear(byId("dataset-examples"));
}

function setupDataset() {
  byId("dataset-class").addEventListener("change", renderDataset);
  setupDataMapHover();
}

// The panel shows what the run measured: the words (tokens.json), the training data map,
// the weak slices (viewer_data_quality.js), the calibration (viewer_calibration.js), any
// of them; none, and it is hidden.
function showDataset() {
  const dataset = DATA.dataset || {};
  byId("dataset-section").hidden = !DATA.dataset;
  byId("dataset-tokens").hidden = !dataset.classes;
  byId("data-map-part").hidden = !dataset.data_map;
  byId("slices-part").hidden = !dataset.slices;
  byId("calibration-part").hidden = !dataset.calibration;
  if (dataset.classes) setupWords(dataset);
  if (dataset.data_map) setupDataMap(dataset.data_map);
  if (dataset.slices) setupSlices(dataset.slices);
  if (dataset.calibration) setupCalibration(dataset.calibration);
}

function setupWords(dataset) {
  const names = Object.keys(dataset.classes);
  fillSelect(byId("dataset-class"), names.map((name) => [name, name]), names[0]);
  const check = dataset.faithfulness;
  byId("dataset-summary").textContent =
    `Measured on ${dataset.examples} examples of ${dataset.split} with ${dataset.method} ` +
    `(${dataset.source}). The words the training data ties to the class, ranked by ` +
    "their reliance: inserted into texts of other classes, how much more the word raises " +
    "the class's probability than random words do, less its pull toward the other classes." +
    (check ? ` Ranking check: the top ${check.words} words raise the class's probability ` +
      `by ${check.top_words.toFixed(3)} when inserted, random words of the same frequency ` +
      `by ${check.random_words.toFixed(3)}.` : "");
  renderDataset();
}
