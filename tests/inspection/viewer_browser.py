"""Opening a viewer page in headless Chromium (the Debian `chromium` package), for the
viewer tests; the `browser` fixture (tests/inspection/conftest.py) launches it once."""

import contextlib
import json
import pathlib

CHROMIUM = pathlib.Path("/usr/bin/chromium")
DATA_BLOCK = '<script type="application/json" id="attention-data">'


def embedded_data(path):
    """What the viewer page at `path` embeds in its data block, read back as JSON."""
    page = pathlib.Path(path).read_text(encoding="utf-8")
    start = page.index(DATA_BLOCK) + len(DATA_BLOCK)
    return json.loads(page[start:page.index("</script>", start)])


@contextlib.contextmanager
def open_viewer(browser, path):
    """Yields (page, problems, requests, dialogs) of the viewer at `path`, once it rendered:
    its console and page errors, every URL it asked for, the dialogs it opened."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems, requests, dialogs = [], [], []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(pathlib.Path(path).as_uri())
    page.wait_for_function("document.body.dataset.view !== undefined")
    try:
        yield page, problems, requests, dialogs
    finally:
        page.close()


def heatmap_pixels(page):
    """The big heatmap's canvas as a data URL: changes when another map is drawn."""
    return page.evaluate("document.getElementById('heatmap').toDataURL()")
