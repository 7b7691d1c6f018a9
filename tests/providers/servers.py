"""Local HTTP servers for the protocol tests: llama-cpp-python's OpenAI server and a recording relay."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1: small context, few threads, quiet."""

    model_path: Path
    alias: str
    #: llama.cpp's threads spin while they wait for each other, so on a busy CI machine one
    #: thread is often faster than two.
    threads: int = 1
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 120.0) -> None:
        """Start the server and wait until it lists its model."""
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model_path),
            "--model_alias",
            self.alias,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            "4096",
            "--n_threads",
            str(self.threads),
            "--n_threads_batch",
            str(self.threads),
            "--seed",
            "7",
            "--verbose",
            "False",
        ]
        # A file, not a pipe: uvicorn logs every request, and a full pipe would stall the server.
        self._log = tempfile.TemporaryFile()  # noqa: SIM115  # closed by kill()
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self._log)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._log.seek(0)
                stderr = self._log.read().decode(errors="replace")
                raise RuntimeError(f"llama_cpp.server exited early:\n{stderr[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        self.kill()
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s:.0f} s")

    def kill(self) -> None:
        """SIGKILL, as a crash or an OOM killer would end it."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        if self._log is not None:
            self._log.close()
            self._log = None
        self.process = None


@dataclass(frozen=True)
class Exchange:
    """One request the relay passed on, with the server's answer."""

    method: str
    path: str
    request: dict[str, Any] | None
    status: int
    response: dict[str, Any] | None


class Relay:
    """Passes HTTP requests to `upstream` and records each exchange (what the server really said).

    `before_request(path, body)` runs before each request is passed on; the tests use it to kill
    the server mid-run. Once the upstream cannot be reached the relay drops the client's
    connection without an answer, which is what a client of a crashed server sees.
    """

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.exchanges: list[Exchange] = []
        self.before_request: Callable[[str, dict[str, Any] | None], None] | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Relay:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def chat_exchanges(self) -> list[Exchange]:
        """The chat completions the server answered (status 200)."""
        return [
            e for e in self.exchanges if e.path.endswith("/chat/completions") and e.status == 200
        ]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        relay = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:  # keep pytest's output clean
                pass

            def do_GET(self) -> None:
                self._relay(None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._relay(self.rfile.read(length))

            def _relay(self, body: bytes | None) -> None:
                request = json.loads(body) if body else None
                if relay.before_request is not None:
                    relay.before_request(self.path, request)
                upstream = http.client.HTTPConnection("127.0.0.1", relay.upstream_port, timeout=300)
                try:
                    headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    payload = answer.read()
                except OSError:
                    # The server is gone: close without a word, as the dead server would have.
                    self.close_connection = True
                    return
                finally:
                    upstream.close()
                relay.exchanges.append(
                    Exchange(
                        self.command,
                        self.path,
                        request,
                        answer.status,
                        _json_or_none(payload),
                    )
                )
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.getheader("Content-Type", "text/plain"))
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def _json_or_none(payload: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
