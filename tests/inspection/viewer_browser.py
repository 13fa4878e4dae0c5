"""Opening a viewer page in headless Chromium (the Debian `chromium` package), for the
viewer tests. The `browser` fixture launches it once per test process; the conftest.py of
tests/inspection/ and of tests/engine/evaluation/ take it from here."""

import contextlib
import json
import pathlib

import pytest

CHROMIUM = pathlib.Path("/usr/bin/chromium")
DATA_BLOCK = '<script type="application/json" id="attention-data">'


# The one Chromium of a test process and how many folders' `browser` fixtures hold it:
# Playwright's sync API runs one instance at a time, and each conftest.py that takes the
# fixture from here defines a fixture of its own.
_SHARED = {"users": 0}


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium, for the viewer tests."""
    if not CHROMIUM.exists():
        pytest.skip("Browser tests need /usr/bin/chromium: apt-get install -y chromium")
    if not _SHARED["users"]:
        from playwright.sync_api import sync_playwright

        _SHARED["playwright"] = sync_playwright().start()
        _SHARED["browser"] = _SHARED["playwright"].chromium.launch(
            executable_path=str(CHROMIUM), headless=True
        )
    _SHARED["users"] += 1
    yield _SHARED["browser"]
    _SHARED["users"] -= 1
    if not _SHARED["users"]:
        _SHARED.pop("browser").close()
        _SHARED.pop("playwright").stop()


def embedded_data(path):
    """What the viewer page at `path` embeds in its data block, read back as JSON."""
    page = pathlib.Path(path).read_text(encoding="utf-8")
    start = page.index(DATA_BLOCK) + len(DATA_BLOCK)
    return json.loads(page[start : page.index("</script>", start)])


def watched_page(browser, height=900):
    """(page, problems, requests, dialogs): a new page that records its console and page
    errors, every URL it asks for and the dialogs it opens (dismissed)."""
    page = browser.new_page(viewport={"width": 1280, "height": height})
    problems, requests, dialogs = [], [], []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return page, problems, requests, dialogs


@contextlib.contextmanager
def open_viewer(browser, path):
    """Yields `watched_page`'s (page, problems, requests, dialogs) of the viewer at `path`,
    once it rendered."""
    page, problems, requests, dialogs = watched_page(browser)
    page.goto(pathlib.Path(path).as_uri())
    page.wait_for_function("document.body.dataset.view !== undefined")
    try:
        yield page, problems, requests, dialogs
    finally:
        page.close()


def heatmap_pixels(page):
    """The big heatmap's canvas as a data URL: changes when another map is drawn."""
    return page.evaluate("document.getElementById('heatmap').toDataURL()")
