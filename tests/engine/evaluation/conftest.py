# The viewer tests' headless Chromium (tests/inspection/viewer_browser.py).
from tests.inspection.viewer_browser import browser  # noqa: F401
