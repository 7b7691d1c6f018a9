"""A headless chromium shared by the viewer tests (skipped, with the reason, where it is absent)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from websockets.sync.client import ClientConnection

from tests.viewer.browser import CHROMIUM, browser


@pytest.fixture(scope="module")
def chromium() -> Iterator[ClientConnection]:
    """The browser-level DevTools socket of one headless chromium."""
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it with apt-get)")
    with browser() as socket:
        yield socket
