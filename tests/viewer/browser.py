"""Headless Debian chromium driven over the DevTools protocol (no downloads, no driver binary).

A page is loaded from a file; every uncaught exception, console error and browser log error is
collected; DOM facts come from Runtime.evaluate; the screenshot from Page.captureScreenshot.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM = shutil.which("chromium")
START_TIMEOUT_S = 60.0


@dataclass
class Tab:
    """One page target's DevTools session."""

    socket: ClientConnection
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    errors: list[str] = field(default_factory=list)

    def note(self, message: dict[str, Any]) -> None:
        """Keep what counts as a JavaScript error on the page."""
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            thrown = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"exception: {thrown}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(
                "console.error: " + " ".join(str(a.get("value")) for a in params.get("args", []))
            )
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            self.errors.append(f"log: {params['entry'].get('text')}")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command and wait for its answer, noting events that arrive meanwhile."""
        number = next(self.ids)
        self.socket.send(json.dumps({"id": number, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.note(message)

    def wait_for(self, event: str) -> None:
        """Read events until `event` arrives."""
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            self.note(message)
            if message.get("method") == event:
                return

    def open(self, path: Path) -> None:
        """Load a file and wait for its load event."""
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression on the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluation failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """A PNG of the whole page (not only the viewport)."""
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


def debugging_url(profile: Path, process: subprocess.Popen[bytes]) -> str:
    """The browser's websocket, read from the port file chromium writes into its profile."""
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT_S
    while not port_file.exists() or len(port_file.read_text().splitlines()) < 2:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with {process.returncode}")
        if time.monotonic() > deadline:
            raise RuntimeError("chromium did not open its debugging port")
        time.sleep(0.1)
    port, browser_path = port_file.read_text().splitlines()[:2]
    return f"ws://127.0.0.1:{port}{browser_path}"


@contextmanager
def browser() -> Iterator[ClientConnection]:
    """A headless chromium with its own throwaway profile; the browser-level DevTools socket."""
    if CHROMIUM is None:
        raise RuntimeError("chromium is not installed")
    profile = Path(tempfile.mkdtemp(prefix="grasp-chromium-"))
    command = [
        CHROMIUM,
        "--headless=new",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        "--no-sandbox",  # CI runs as root, where chromium refuses its sandbox
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--window-size=1280,900",
        "about:blank",
    ]
    # Chromium puts its singleton socket in a fresh TMPDIR folder it never removes: keep that
    # folder inside the profile, which is removed below.
    env = {**os.environ, "TMPDIR": str(profile)}
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    try:
        with connect(debugging_url(profile, process), max_size=64 * 2**20) as socket:
            yield socket
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def tab(socket: ClientConnection) -> Iterator[Tab]:
    """A fresh page target with Page, Runtime and Log events on, closed afterwards."""
    browser_tab = Tab(socket)
    target = browser_tab.call("Target.createTarget", url="about:blank")["targetId"]
    session = browser_tab.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    page = SessionTab(socket, session)
    for domain in ("Page", "Runtime", "Log"):
        page.call(f"{domain}.enable")
    try:
        yield page
    finally:
        browser_tab.call("Target.closeTarget", targetId=target)


class SessionTab(Tab):
    """A Tab whose commands go to one attached target (flattened session)."""

    def __init__(self, socket: ClientConnection, session: str) -> None:
        super().__init__(socket)
        self.session = session

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self.ids) + 10_000_000  # apart from the browser-level ids
        payload = {"id": number, "method": method, "params": params, "sessionId": self.session}
        self.socket.send(json.dumps(payload))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == number:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            if message.get("sessionId") == self.session:
                self.note(message)

    def wait_for(self, event: str) -> None:
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("sessionId") != self.session:
                continue
            self.note(message)
            if message.get("method") == event:
                return
