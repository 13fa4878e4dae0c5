"""Regenerates docs/live_lab.png: the live lab (serve.py) on the `make train` run and its
int8 copy, a review typed, the two runs compared and one word removed.

Run from the repository root after `make train` (needs /usr/bin/chromium; about a minute
on 2 CPU cores):

    .venv/bin/python compress.py runs/default --int8
    .venv/bin/python docs/make_live_screenshot.py

It serves both runs from this process on a free port, as `python serve.py runs/default
runs/default_int8` does, types one review of our own writing and removes its most
important word, so the picture shows the prediction, the two runs side by side and the
edit's probability move. The review must be predicted right and confidently.
"""

import io
import os
import pathlib
import sys
import threading

from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import serve  # noqa: E402
from run_folder import runs, saved_run  # noqa: E402

# Relative, as the page shows them.
RUN_DIRS = [pathlib.Path("runs/default"), pathlib.Path("runs/default_int8")]
OUTPUT = pathlib.Path(__file__).resolve().parent / "live_lab.png"
SHOWN = "a gripping, beautifully acted film with a sharp and funny script"
SHOWN_LABEL = "fresh"
MIN_PROBABILITY = 0.9


def screenshot(url):
    """The page at `url` once the review was predicted by both runs and its most important
    word removed, as PNG bytes."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page(viewport={"width": 1240, "height": 1240})
        page.goto(url)
        page.wait_for_selector("body[data-live='ready']", state="attached")
        page.select_option("#live-compare", RUN_DIRS[1].name)
        page.fill("#live-text", SHOWN)
        page.click("#live-predict")
        page.wait_for_selector("body[data-live-done='1']", state="attached")
        label = page.locator("#predicted-label").text_content()
        probability = float(
            page.locator(
                f"#compare-classes [data-row='{SHOWN_LABEL}'][data-column='1']"
            ).text_content()
        )
        if label != SHOWN_LABEL or probability < MIN_PROBABILITY:
            sys.exit(
                f"make_live_screenshot.py: {RUN_DIRS[0]} predicts {label} (p({SHOWN_LABEL}) "
                f"{probability:.2f}) for the shown review; write one it gets right with "
                f"{MIN_PROBABILITY} or more"
            )
        # The word the method scores highest, as predict.py --explain ranks it first.
        best = page.evaluate(
            "(() => { const words = DATA.examples[0].methods[state.method]"
            ".words; return words.indexOf(Math.max(...words)); })()"
        )
        page.locator(f"#rollout [data-word='{best}']").click()
        page.click("#live-remove")
        page.wait_for_selector("body[data-live-done='2']", state="attached")
        png = page.screenshot(full_page=False)
        browser.close()
    return png


def main():
    os.chdir(ROOT)
    for run_dir in RUN_DIRS:
        problem = saved_run.run_dir_problem(run_dir)
        if problem:
            sys.exit(
                f"make_live_screenshot.py: {problem}; run make train, then python "
                f"compress.py {RUN_DIRS[0]} --int8"
            )
    try:
        labs = serve.start_labs([str(run_dir) for run_dir in RUN_DIRS])
    except runs.RunError as error:
        sys.exit(f"make_live_screenshot.py: {error}")
    server = serve.lab_server(labs)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        png = screenshot(f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()
        server.server_close()
    # A 256-colour palette keeps the file small; the page uses few colours.
    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256)
    image.save(OUTPUT, optimize=True)
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
