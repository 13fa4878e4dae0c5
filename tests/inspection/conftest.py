import pytest

from tests.inspection.viewer_browser import CHROMIUM


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium, for the viewer tests (tests/inspection/viewer_browser.py)."""
    if not CHROMIUM.exists():
        pytest.skip("Browser tests need /usr/bin/chromium: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield browser
        browser.close()
