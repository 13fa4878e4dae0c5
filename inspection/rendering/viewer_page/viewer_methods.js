// The token importance panel: the words coloured by the chosen attribution method, on
// what scale, and its faithfulness next to it. Inlined after viewer.js into its (strict)
// script, which calls setupMethods(), fillMethods(), renderMethod() and renderRollout(): function
// declarations only, so they exist when viewer.js's setup() runs. Like viewer.js, it
// writes data only through textContent.

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
  // A live run without numbers: its Method select starts on the default method.
  if (!faithfulness && DATA.live) return;
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

function setupMethods() {
  byId("method-select").addEventListener("change", (event) => {
    state.method = event.target.value;
    renderMethod();
  });
}

// Fills the method select, the best measured method marked.
function fillMethods() {
  fillSelect(byId("method-select"), DATA.methods.map((method) => [method,
    DATA.meta.faithfulness && DATA.meta.faithfulness.best_method === method
      ? `${method} (best)` : method]), state.method);
}

function renderMethod() {
  document.body.dataset.method = state.method;
  renderRolloutNote();
  renderFaithfulness();
  renderRollout();
}

// The tokens in reading order as runs: one per special token, one per word (its pieces).
function tokenRuns(example) {
  const runs = [];
  example.tokens.forEach((token, index) => {
    const word = example.word_index[index];
    const last = runs[runs.length - 1];
    if (word !== null && last && last.word === word) last.tokens.push(index);
    else runs.push({ word, tokens: [index] });
  });
  return runs;
}

// A piece as it reads in its word: a WordPiece continuation without its "##", a first
// piece without the space mark of RoBERTa ("Ġ") or XLM-RoBERTa ("▁").
function pieceText(token, position) {
  if (position > 0) return token.startsWith("##") && token.length > 2 ? token.slice(2) : token;
  return /^[\u0120\u2581]./u.test(token) ? token.slice(1) : token;
}

// Whether a word's pieces, read as `pieceText` reads them, spell it: not so when its
// pieces are bytes (RoBERTa's "caf" "Ã©" for "café"), which then show as the word.
function piecesSpell(example, run) {
  const text = run.tokens.map((index, position) => pieceText(example.tokens[index], position));
  return text.join("") === example.words[run.word];
}

function renderRollout() {
  const example = DATA.examples[state.example];
  const box = byId("rollout");
  clear(box);
  if (example.tokens.length === 0) { box.textContent = "(no tokens)"; return; }
  const scores = methodScores(example), colourOf = wordColour(scores.words);
  const active = activeQuery();
  tokenRuns(example).forEach((run) => {
    if (run.word === null) {
      const index = run.tokens[0], token = example.tokens[index];
      const span = element("span", token, "special");
      span.setAttribute("title",
        `${token} (special token, not a word of the text): ${scores.tokens[index].toFixed(4)}`);
      if (index === active) span.classList.add("active");
      box.appendChild(span);
      return;
    }
    const word = example.words[run.word], total = scores.words[run.word];
    const colour = colourOf(total);
    const parts = run.tokens.map((index) =>
      `${example.tokens[index]} ${scores.tokens[index].toFixed(4)}`);
    const sum = `${word}: ${total.toFixed(4)} = ${parts.join(" + ")}`;
    if (run.tokens.length === 1 || !piecesSpell(example, run)) {
      const span = element("span", word);
      span.dataset.word = String(run.word);  // the word the live lab's editor opens
      span.style.background = colour;
      span.setAttribute("title", run.tokens.length === 1
        ? `${example.tokens[run.tokens[0]]}: ${total.toFixed(4)}` : sum);
      if (run.tokens.includes(active)) span.classList.add("active");
      box.appendChild(span);
      return;
    }
    const wordSpan = element("span", null, "word");
    wordSpan.dataset.word = String(run.word);
    wordSpan.style.background = colour;
    wordSpan.setAttribute("title", sum);
    run.tokens.forEach((index, position) => {
      const piece = element("span", pieceText(example.tokens[index], position), "piece");
      piece.setAttribute("title", `${example.tokens[index]} (a piece of "${word}"): ` +
        `${scores.tokens[index].toFixed(4)} of the word's ${total.toFixed(4)}`);
      if (index === active) piece.classList.add("active");
      wordSpan.appendChild(piece);
    });
    box.appendChild(wordSpan);
  });
}

function renderRolloutNote() {
  const description = DATA.descriptions[state.method];
  let note = description ? `${state.method}: ${description}` : "";
  if (state.method === "rollout") {
    note += DATA.meta.pooling === "cls"
      ? " Importance is the class token's row of the rollout (the model reads that token)."
      : " Importance is the mean of the rollout's query rows (the model pools all tokens).";
  }
  if (DATA.signed[state.method]) {
    note += " Orange words count for the predicted class, blue ones against it.";
  }
  const pieces = DATA.examples.some((example) =>
    example.words.length < example.word_index.filter((index) => index !== null).length);
  if (pieces) {
    note += " The pieces of a word share one box, coloured by the sum of their importance;" +
      " hover a piece for its own.";
  }
  if (DATA.examples.some((example) => example.word_index.includes(null))) {
    note += " Dashed tokens are special: added by the model, no words of the text.";
  }
  byId("rollout-note").textContent = note;
}
