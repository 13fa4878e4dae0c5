// The live lab (serve.py, docs/live_lab.md): the viewer on texts typed into the page. A text
// goes to POST /api/predict of the server that served the page; the answer's `view`, the
// export's example object, becomes the page's one example and viewer.js draws it as it draws
// an exported one. A click on a word opens an editor: the words the model read, that word
// removed or replaced, go to the run again, and the move of the predicted class's
// probability is listed. With "Compare with", the same text goes to a second run and both
// runs' probabilities and word scores are set side by side. The Run select swaps in the
// run's class names, heads and Dataset panel. Inlined after viewer.js, whose setup() calls
// setupLive() when the page has `DATA.live`; text only through textContent.

// The run shown and its last answer. `ticket` numbers the predictions and run switches, so
// that an answer arriving after a newer one was asked for is dropped.
const LIVE = { ticket: 0, run: null, answer: null, word: null };

function liveRun(name) { return DATA.live.runs.find((run) => run.name === name) || null; }

function setupLive() {
  const runs = DATA.live.runs;
  byId("live-section").hidden = false;
  document.body.classList.add("live");
  fillSelect(byId("live-run"), runs.map((run) => [run.name, run.name]), runs[0].name);
  fillLiveMethods(runs[0]);
  fillCompare();
  byId("live-predict").addEventListener("click", predictText);
  byId("live-text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      predictText();
    }
  });
  byId("live-run").addEventListener("change", () => {
    const run = liveRun(byId("live-run").value);
    fillLiveMethods(run);
    fillCompare();
    const shown = LIVE.answer !== null;
    showRun(run);
    if (shown) predictText();
  });
  // Another run or method to the text on screen: ask again rather than show a stale answer.
  for (const id of ["live-compare", "live-method"]) {
    byId(id).addEventListener("change", () => { if (LIVE.answer) predictText(); });
  }
  byId("rollout").addEventListener("click", (event) => {
    const word = event.target.closest("[data-word]");
    if (word && LIVE.answer) openEditor(Number(word.dataset.word));
  });
  byId("live-remove").addEventListener("click", () => editWord(null));
  byId("live-replace").addEventListener("click", () => editWord(byId("live-word").value));
  byId("live-cancel").addEventListener("click", closeEditor);
  byId("live-word").addEventListener("keydown", (event) => {
    if (event.key === "Enter") editWord(byId("live-word").value);
  });
  showRun(runs[0]);
  setStatus("Type a text, then Predict (Ctrl+Enter).", false);
  document.body.dataset.live = "ready";
}

function fillLiveMethods(run) {
  fillSelect(byId("live-method"), run.methods.map((method) => [method,
    method === run.default_method ? `${method} (the run's default)` : method]),
    run.default_method);
}

// Any run but the one shown; the choice is kept when it still can be.
function fillCompare() {
  const select = byId("live-compare"), chosen = select.value, shown = byId("live-run").value;
  const others = DATA.live.runs.filter((run) => run.name !== shown).map((run) => run.name);
  fillSelect(select, [["", "none"]].concat(others.map((name) => [name, name])),
             others.includes(chosen) ? chosen : "");
  select.disabled = others.length === 0;
}

// Makes `run` the page's run, with no example yet: its classes, heads and Dataset panel.
function showRun(run) {
  LIVE.ticket += 1;
  LIVE.run = run;
  LIVE.answer = null;
  Object.assign(DATA, {
    class_names: run.class_names, kept_heads: run.kept_heads, heads: run.heads,
    dataset: run.dataset, examples: [], methods: run.methods,
    default_method: run.default_method, signed: {},
    meta: { run: run.name, pooling: run.pooling,
            sequence_length: run.sequence_length, word_pieces: run.word_pieces,
            default_method: run.default_method, kept_heads: run.kept_heads,
            ...(run.faithfulness ? { faithfulness: run.faithfulness } : {}),
            ...(run.problems.length ? { problems: run.problems } : {}) },
  });
  closeEditor();
  clear(byId("live-edits"));
  byId("compare-section").hidden = true;
  byId("live-time").textContent = "";
  byId("live-truncated").textContent = "";
  showData();
}

function setStatus(text, isError) {
  byId("live-status").textContent = text;
  byId("live-status").classList.toggle("error", isError);
}

// Counts the requests answered or failed, for whoever waits on the page (the tests).
function requestDone() {
  document.body.dataset.liveDone = String(Number(document.body.dataset.liveDone || 0) + 1);
}

// The lab's JSON answer for `texts` by `run` with the chosen method; its one-line error
// otherwise.
async function ask(run, texts, attention) {
  let response;
  try {
    response = await fetch("/api/predict", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ run, texts, method: byId("live-method").value, attention }),
    });
  } catch (error) {
    throw new Error(`The lab did not answer (${error.message}): is serve.py still running?`);
  }
  const body = await response.json().catch(() => null);
  if (!response.ok || body === null) {
    throw new Error(body && body.error ? body.error :
      `The lab answered ${response.status} ${response.statusText} without an explanation.`);
  }
  return body;
}

async function predictText() {
  const text = byId("live-text").value, run = LIVE.run;
  const other = liveRun(byId("live-compare").value);
  const ticket = ++LIVE.ticket;
  setStatus("Predicting\u2026", false);
  try {
    const [main, compared] = await Promise.all([ask(run.name, [text], true),
      other ? ask(other.name, [text], false) : null]);
    if (ticket !== LIVE.ticket) return;
    showAnswer(run, main);
    if (compared) showComparison(run, main, other, compared);
    byId("compare-section").hidden = !compared;
    setStatus("", false);
  } catch (error) {
    if (ticket === LIVE.ticket) setStatus(error.message, true);
  } finally {
    requestDone();
  }
}

function milliseconds(seconds) { return `${Math.round(1000 * seconds)} ms`; }

function truncation(run, answer) {
  return answer.truncated ? `The model read the first ${run.sequence_length} tokens of ` +
    `${answer.token_count} (${run.name}).` : "";
}

// The answer as the page's one example, drawn as an export's.
function showAnswer(run, body) {
  const [answer] = body.answers, view = answer.view, method = answer.explanation_method;
  LIVE.ticket += 1;  // an edit of the answer before must not land under this one
  LIVE.answer = answer;
  Object.assign(DATA, {
    class_names: body.class_names, examples: [view], methods: Object.keys(view.methods),
    default_method: method,
    signed: { [method]: Math.min(0, ...view.methods[method].words) < 0 },
  });
  showData(false);
  closeEditor();
  clear(byId("live-edits"));
  byId("live-time").textContent = `${run.name} answered in ${milliseconds(body.seconds)}`;
  byId("live-truncated").textContent = truncation(run, answer);
}

function openEditor(word) {
  LIVE.word = word;
  const input = byId("live-word");
  input.value = LIVE.answer.view.words[word];
  byId("live-editor").hidden = false;
  input.focus();
  input.select();
}

function closeEditor() {
  LIVE.word = null;
  byId("live-editor").hidden = true;
}

// The words the model read with word `index` removed (`replacement` null) or replaced.
function editedText(words, index, replacement) {
  const edited = words.slice();
  if (replacement === null) edited.splice(index, 1);
  else edited[index] = replacement.trim();
  return edited.join(" ");
}

async function editWord(replacement) {
  if (LIVE.word === null) return;
  if (replacement !== null && !replacement.trim()) {
    setStatus("Type the word to put in its place, or Remove it.", true);
    return;
  }
  const original = LIVE.answer, run = LIVE.run, ticket = LIVE.ticket;
  const word = original.view.words[LIVE.word];
  const change = replacement === null ? `removed "${word}"` :
    `"${word}" -> "${replacement.trim()}"`;
  const text = editedText(original.view.words, LIVE.word, replacement);
  closeEditor();
  setStatus("Predicting the edited text\u2026", false);
  try {
    // Before: the words read, joined as the edit joins them ("[UNK]" is read anew).
    const body = await ask(run.name, [original.view.words.join(" "), text], false);
    if (ticket !== LIVE.ticket) return;
    addEdit(original, change, body.answers[0], body.answers[1]);
    setStatus("", false);
  } catch (error) {
    if (ticket === LIVE.ticket) setStatus(error.message, true);
  } finally {
    requestDone();
  }
}

function signedText(value) { return (value >= 0 ? "+" : "") + value.toFixed(4); }

function cell(text, className, data) {
  const node = element("div", text, className);
  Object.assign(node.dataset, data || {});
  return node;
}

// One row per edit under the original: its text and the predicted class's probability
// before (the unedited words, `baseline`) -> after (difference).
function addEdit(original, change, baseline, edited) {
  const box = byId("live-edits"), label = original.predicted_label;
  const before = baseline.probabilities[label], after = edited.probabilities[label];
  if (!box.firstChild) {
    box.className = "compare-table";
    box.style.gridTemplateColumns = "repeat(4, auto)";
    box.append(...["", "text", `p(${label}) before -> after (difference)`, "predicted"].map(
      (text) => cell(text, "head")),
      cell("original"), cell(original.view.words.join(" "), "text"),
      cell(`p(${label}) ${before.toFixed(4)}`), cell(label));
  }
  const difference = after - before;
  box.append(cell(change, "", { edit: "change" }), cell(edited.text, "text", { edit: "text" }),
    cell(`p(${label}) ${before.toFixed(4)} -> ${after.toFixed(4)} (${signedText(difference)})`,
         difference < 0 ? "down" : "up", { edit: "probability" }),
    cell(edited.predicted_label, "", { edit: "predicted" }));
}

// A table: its heads, then per row its cells, `key` naming them (for the tests); numbers
// to 4 decimals, those of the last column signed when it is a difference, null as "-".
function fillTable(box, heads, rows, difference) {
  box.className = "compare-table";
  box.style.gridTemplateColumns = `repeat(${heads.length}, auto)`;
  box.append(...heads.map((text) => cell(text, "head")));
  rows.forEach(({ key, values }) => values.forEach((value, column) => {
    const number = typeof value === "number";
    const signed = difference && column === heads.length - 1;
    const text = value === null ? "-" :
      (number ? (signed ? signedText(value) : value.toFixed(4)) : value);
    box.appendChild(cell(text, number ? "number" : "", { row: key, column: String(column) }));
  }));
  return box;
}

// Both runs' probabilities per class and their difference; per word both runs' scores and
// their difference when they read the same words, else each run's own words.
function showComparison(runA, bodyA, runB, bodyB) {
  const a = bodyA.answers[0], b = bodyB.answers[0], method = a.explanation_method;
  const difference = (first, second) => (first === null || second === null ? null :
    second - first);
  const names = [...new Set(bodyA.class_names.concat(bodyB.class_names))];
  const probability = (answer, name) => (Object.hasOwn(answer.probabilities, name) ?
    answer.probabilities[name] : null);
  const classes = byId("compare-classes");
  clear(classes);
  fillTable(classes, ["class", runA.name, runB.name, `${runB.name} - ${runA.name}`],
    [{ key: "predicted", values: ["predicted", a.predicted_label, b.predicted_label, ""] }]
      .concat(names.map((name) => {
        const [first, second] = [probability(a, name), probability(b, name)];
        return { key: name, values: [`p(${name})`, first, second, difference(first, second)] };
      })), true);
  const truncated = [truncation(runA, a), truncation(runB, b)].filter(Boolean).join(" ");
  byId("live-truncated").textContent = truncated;
  byId("live-time").textContent = `${runA.name} answered in ${milliseconds(bodyA.seconds)}, ` +
    `${runB.name} in ${milliseconds(bodyB.seconds)}`;
  const words = byId("compare-words"), [wordsA, wordsB] = [a.view.words, b.view.words];
  const [scoresA, scoresB] = [a.view.methods[method].words, b.view.methods[method].words];
  clear(words);
  if (JSON.stringify(wordsA) === JSON.stringify(wordsB)) {
    byId("compare-words-note").textContent = `Per word its ${method} score in each run ` +
      "and the difference.";
    words.appendChild(fillTable(element("div"), ["word", runA.name, runB.name,
      `${runB.name} - ${runA.name}`], wordsA.map((word, index) => ({ key: String(index),
      values: [word, scoresA[index], scoresB[index], scoresB[index] - scoresA[index]] })),
      true));
    return;
  }
  byId("compare-words-note").textContent = "The runs read the text as different words " +
    `(different tokenizers), so their words cannot be paired: each run's words and ${method} ` +
    "scores.";
  [[runA, wordsA, scoresA], [runB, wordsB, scoresB]].forEach(([run, list, scores]) => {
    words.appendChild(fillTable(element("div"), ["word", `${run.name}`], list.map(
      (word, index) => ({ key: `${run.name}:${index}`, values: [word, scores[index]] }))));
  });
}
