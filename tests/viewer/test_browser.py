"""The browser harness itself: a JavaScript error on a page is caught (so page tests can fail)."""

from __future__ import annotations

from pathlib import Path

from websockets.sync.client import ClientConnection

from tests.viewer.browser import tab


def test_script_errors_and_console_errors_are_reported(
    chromium: ClientConnection, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text(
        "<!DOCTYPE html><html><body><p id='p'>hello</p>"
        "<script>console.error('bad thing');</script>"
        "<script>document.getElementById('p').dataset.seen = '1'; notAFunction();</script>"
        "</body></html>",
        encoding="utf-8",
    )
    with tab(chromium) as page:
        page.open(broken)
        assert page.evaluate("document.getElementById('p').dataset.seen") == "1"
        errors = list(page.errors)
    assert "console.error: bad thing" in errors
    assert any(
        e.startswith("exception: ReferenceError: notAFunction is not defined") for e in errors
    )
