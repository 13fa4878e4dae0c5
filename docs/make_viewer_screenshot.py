"""Regenerates docs/viewer.png: the `make train` run's viewer, opened in headless Chromium.

Run from the repository root after `make train` and `evaluate.py --heads` (needs
/usr/bin/chromium; about 30 s on 2 CPU cores):

    .venv/bin/python evaluate.py runs/default --split validation --heads 500
    .venv/bin/python docs/make_viewer_screenshot.py

It exports one review of our own writing from `runs/default` (MiniLM fine-tuned on Rotten
Tomatoes) and shows its model view, bordered by the heads' importance from
`eval/validation/heads.json`, with the most important head open in the heatmap. The
review must be predicted right and confidently, or the picture would show a failure.
"""

import io
import os
import pathlib
import sys
import tempfile

from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.evaluation.attention import export_run_attention  # noqa: E402
from run_folder import runs, saved_run  # noqa: E402

# Relative, as the page shows it (in the command that measures faithfulness).
RUN_DIR = pathlib.Path("runs/default")
OUTPUT = pathlib.Path(__file__).resolve().parent / "viewer.png"
SHOWN = (
    "a gripping, beautifully acted film: the script is sharp and funny, and the ending "
    "stays with you"
)
SHOWN_LABEL = "fresh"
MIN_PROBABILITY = 0.9


def main():
    os.chdir(ROOT)
    problem = saved_run.run_dir_problem(RUN_DIR)
    if problem:
        sys.exit(f"make_viewer_screenshot.py: {problem}; run make train first")
    if not (RUN_DIR / runs.EVAL_DIR / "validation" / "heads.json").is_file():
        sys.exit(
            f"make_viewer_screenshot.py: {RUN_DIR} has no eval/validation/heads.json; "
            f"run python evaluate.py {RUN_DIR} --split validation "
            "--heads 500 first"
        )
    try:
        run = saved_run.load_run(RUN_DIR)
    except runs.RunError as error:
        sys.exit(f"make_viewer_screenshot.py: {error}")
    with tempfile.TemporaryDirectory() as directory:
        export = export_run_attention(
            run,
            [SHOWN],
            pathlib.Path(directory) / "export",
            true_labels=[run.class_names.index(SHOWN_LABEL)],
            heatmap_examples=0,
            run_info={"source": "docs/make_viewer_screenshot.py"},
        )
        record = export.record(export.example_ids[0])
        probability = record.probabilities[record.predicted_label_index]
        if record.predicted_label_index != record.true_label_index or (
            probability < MIN_PROBABILITY
        ):
            sys.exit(
                f"make_viewer_screenshot.py: {RUN_DIR} predicts "
                f"{run.class_names[record.predicted_label_index]} ({probability:.2f}) for "
                f"the shown review; write one it gets right with {MIN_PROBABILITY} or more"
            )
        export.close()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
            page = browser.new_page(viewport={"width": 1240, "height": 1120})
            page.goto((export.directory / "index.html").resolve().as_uri())
            # The most important head, as the model view's note names it first.
            most = page.evaluate("importanceRanking()[0]")
            page.locator(
                f'#model-view .thumbnail[data-layer="{most["layer"]}"][data-head="{most["head"]}"]'
            ).click()
            png = page.screenshot(full_page=False)
            browser.close()
    # A 256-colour palette keeps the file small; the page uses few colours.
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256)
    image.save(OUTPUT, optimize=True)
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
