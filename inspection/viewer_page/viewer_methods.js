// The attribution method switch: which method's scores colour the words, on what scale,
// and its faithfulness next to it. Inlined after viewer.js into its (strict) script, which
// calls setupMethods() and renderMethod(): function declarations only, so they exist when
// viewer.js's setup() runs. Like viewer.js, it writes data only through textContent.

// The chosen method's scores of the example: { tokens: per token, words: per word }.
function methodScores(example) { return example.methods[state.method]; }

// A word's background. Colour by word: a word of several pieces gets the sum of theirs, as
// predict.py ranks. A method that never goes below 0 is min-max scaled: rollout mixes in
// the identity, so its importances are often close to uniform and a 0-to-largest scale
// would paint every token the same. One that does is scaled by the largest |score| around
// 0, so the sign shows: orange for the class, blue against it.
function wordColour(words) {
  const values = words.length ? words : [0];
  const forClass = "232, 110, 20", againstClass = "37, 99, 235";
  return (total) => {
    let strength, channels = forClass;
    if (DATA.signed[state.method]) {
      strength = Math.abs(total) / (Math.max(...values.map(Math.abs)) || 1);
      if (total < 0) channels = againstClass;
    } else {
      const largest = Math.max(...values), smallest = Math.min(...values);
      strength = (total - smallest) / (largest - smallest || 1);
    }
    return `rgba(${channels}, ${(0.08 + 0.82 * strength).toFixed(3)})`;
  };
}

function interval(measure) {
  const [low, high] = measure.ci95;
  return `${measure.mean.toFixed(3)} (95% CI ${low.toFixed(3)} to ${high.toFixed(3)})`;
}

// The chosen method's faithfulness on the exported split, or how to measure it.
function renderFaithfulness() {
  const box = byId("faithfulness"), faithfulness = DATA.meta.faithfulness;
  clear(box);
  if (!faithfulness) {
    // As many examples as evaluate.py's --faithfulness measures by default.
    const examples = 500;
    const info = DATA.meta.run_info || {};
    let command = `python evaluate.py ${info.run_dir || "RUN_DIR"}`;
    if (info.data === "validation") command += " --split validation";
    box.appendChild(element("span", "No faithfulness numbers for this export: measure them " +
      "with "));
    box.appendChild(element("code", `${command} --faithfulness ${examples}`));
    box.appendChild(element("span", ", then export again."));
    return;
  }
  const numbers = faithfulness.methods[state.method];
  const best = faithfulness.best_method === state.method ? " (the best method)" :
    `; best: ${faithfulness.best_method}`;
  box.textContent = numbers
    ? `Comprehensiveness ${interval(numbers.comprehensiveness)}, higher is more faithful; ` +
      `sufficiency ${interval(numbers.sufficiency)}, lower is more faithful; on ` +
      `${faithfulness.examples} ${faithfulness.split} examples${best}.`
    : `${state.method} was not measured on ${faithfulness.split}${best}.`;
}

// Fills the method select, the best measured method marked, and follows it.
function setupMethods() {
  fillSelect(byId("method-select"), DATA.methods.map((method) => [method,
    DATA.meta.faithfulness && DATA.meta.faithfulness.best_method === method
      ? `${method} (best)` : method]), state.method);
  byId("method-select").addEventListener("change", (event) => {
    state.method = event.target.value;
    renderMethod();
  });
}

function renderMethod() {
  document.body.dataset.method = state.method;
  renderRolloutNote();
  renderFaithfulness();
  renderRollout();
}
