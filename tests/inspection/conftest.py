# The viewer tests' headless Chromium, shared with tests/engine/evaluation/.
from tests.inspection.viewer_browser import browser  # noqa: F401
