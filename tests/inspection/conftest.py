# The viewer tests' headless Chromium, shared with tests/run_inspection/.
from tests.inspection.viewer_browser import browser  # noqa: F401
