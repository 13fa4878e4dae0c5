"""bench_serve's renderer part: how long headless Chromium takes to draw a long text's
model view (every layer x head as a thumbnail) in the viewer page.

The runs cap texts at 64 tokens, so the record is made up: `tokens` words, the first
run's layers x heads, each attention row a softmax of seeded random logits with a bias
towards nearby keys (rows sum to 1, as a model's do), written by `write_viewer` as
export.py writes a page. The page is opened from file:// in a fresh tab per timing.
Timed in the page: from the navigation's start (`performance.now()`'s origin) to the
first frame painted after the model view's grid was filled, which `renderModelView`
marks by setting `#model-view`'s `data-example` once every thumbnail's canvas is drawn
(a MutationObserver, installed before the page's script runs, sees that attribute).
That span also holds the page's parse, the data's decoding and the heatmap and lines
drawn before the model view, all of which a reader waits for.
"""

import contextlib
import pathlib
import statistics
import time

import numpy as np

CHROMIUM = pathlib.Path("/usr/bin/chromium")
WORDS = (
    "the film is a quiet and moving story of two friends who grow apart but the "
    "acting feels flat and the plot drags in the middle"
).split()
# Before the page's script: resolves to the time of the first frame painted (a frame,
# then a task after it) once #model-view is marked drawn.
TIMER = """
window.benchPainted = new Promise((resolve, reject) => {
  setTimeout(() => reject(new Error("no model view drawn within 120 s")), 120000);
  new MutationObserver((mutations, observer) => {
    if (!mutations.some((mutation) => mutation.target.id === "model-view")) return;
    observer.disconnect();
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now())));
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-example"]});
});
"""


def long_record(tokens, num_layers, num_heads, class_names, seed=0):
    """An `AttentionRecord` of `tokens` words with (num_layers, num_heads) maps whose rows
    sum to 1, the same for the same seed."""
    from inspection.attention_file.record import AttentionRecord

    rng = np.random.default_rng(seed)
    positions = np.arange(tokens)
    distance = np.abs(positions[:, np.newaxis] - positions[np.newaxis, :])  # (T, T)
    logits = rng.normal(0.0, 1.5, (num_layers, num_heads, tokens, tokens)).astype(np.float32)
    logits -= (distance / rng.uniform(2, 40, (num_layers, num_heads, 1, 1))).astype(np.float32)
    logits -= logits.max(axis=-1, keepdims=True)
    scores = np.exp(logits)
    scores /= scores.sum(axis=-1, keepdims=True)  # (L, N, T, T), softmax over the keys
    words = [WORDS[index % len(WORDS)] for index in range(tokens)]
    probabilities = np.full(len(class_names), 0.2 / max(len(class_names) - 1, 1), np.float32)
    probabilities[-1] = 0.8
    return AttentionRecord(
        example_id="long",
        text=" ".join(words),
        tokens=words,
        attention_scores=scores,
        probabilities=probabilities,
        predicted_label_index=len(class_names) - 1,
    )


def time_model_view(folder, tokens, num_layers, num_heads, class_names, renders, browser=None):
    """Writes the page of a `tokens`-token record into `folder` and times its model view
    `renders` times after one untimed opening (`render` in the bench's results), in
    `browser` (a Playwright Chromium; None: one of its own)."""
    from playwright.sync_api import sync_playwright

    from inspection.rendering.viewer import write_viewer

    if not CHROMIUM.exists():
        return {"error": f"no {CHROMIUM}: apt-get install -y chromium"}
    record = long_record(tokens, num_layers, num_heads, class_names)
    path = write_viewer(
        pathlib.Path(folder) / "index.html", [record], class_names, title="bench_serve: a long text"
    )
    page_ms, wall_ms, thumbnails = [], [], set()
    with contextlib.ExitStack() as stack:
        if browser is None:
            playwright = stack.enter_context(sync_playwright())
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
            stack.callback(browser.close)
        for attempt in range(renders + 1):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            problems = []
            page.on("pageerror", lambda error, problems=problems: problems.append(str(error)))
            page.add_init_script(TIMER)
            started = time.perf_counter()
            page.goto(path.as_uri())
            # A promise: evaluate waits for it (the page's CSP forbids polling by eval).
            painted = page.evaluate("window.benchPainted")
            wall = time.perf_counter() - started
            # Every thumbnail drawn at a pixel per weight.
            thumbnails.add(
                page.evaluate(
                    "[...document.querySelectorAll('#model-view canvas')].filter("
                    f"(canvas) => canvas.width === {tokens}).length"
                )
            )
            page.close()
            if problems:
                return {"error": f"the page failed: {problems[0]}"}
            if attempt:  # The first opening warms Chromium up.
                page_ms.append(round(painted, 1))
                wall_ms.append(round(1000 * wall, 1))
    return {
        "tokens": tokens,
        "layers": num_layers,
        "heads": num_heads,
        "page_mb": round(path.stat().st_size / 2**20, 2),
        "thumbnails": sorted(thumbnails),
        "page_ms": page_ms,
        "wall_ms": wall_ms,
        "median_ms": statistics.median(page_ms),
    }
