"""A local stand-in for the Gemini REST API that answers with recorded responses.

generateContent: the request's system instruction names the GRASP node that asked (its prompt's
opening words); that node's recorded replies (tests/fixtures/gemini_responses/<node>.json) are
served in order, and a request with none left is answered 500 with a message naming the node, so
an unexpected call fails loudly. batchEmbedContents / embedContent: vectors of the size asked
for, made by the project's hashing embedder (deterministic, and similar texts stay similar).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from nodes.agent import evaluate, plan, rewrite, select_entities, synthesize
from nodes.embedding import HashingEmbedder
from nodes.indexing import extract

RESPONSES = Path(__file__).parents[1] / "fixtures" / "gemini_responses"


def _system_prompts(module: ModuleType) -> tuple[str, ...]:
    """A node module's system prompts: its str constants named *SYSTEM (a node may have several)."""
    return tuple(
        value
        for name, value in vars(module).items()
        if name.isupper() and name.endswith("SYSTEM") and isinstance(value, str) and value.strip()
    )


#: Node name → its system prompts, read from the prompts themselves.
NODE_PROMPTS = {
    "extract": _system_prompts(extract),
    "plan": _system_prompts(plan),
    "rewrite": _system_prompts(rewrite),
    "select_entities": _system_prompts(select_entities),
    "evaluate": _system_prompts(evaluate),
    "synthesize": _system_prompts(synthesize),
}


@dataclass(frozen=True)
class Request:
    """One request the fake received."""

    path: str
    api_key: str | None
    body: dict[str, Any]
    node: str | None
    status: int


def load_replies(directory: Path = RESPONSES) -> dict[str, list[dict[str, Any]]]:
    """Each node's recorded replies, in the order they are served."""
    replies: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(directory.glob("*.json")):
        recorded = json.loads(path.read_text())
        replies[recorded["node"]] = list(recorded["replies"])
    return replies


def node_of(body: dict[str, Any]) -> str | None:
    """Which node's prompt the request's system instruction carries."""
    parts = (body.get("systemInstruction") or {}).get("parts") or []
    system = "".join(part.get("text", "") for part in parts)
    for node, prompts in NODE_PROMPTS.items():
        if any(system.startswith(prompt[:60]) for prompt in prompts):
            return node
    return None


class FakeGemini:
    """The fake API on 127.0.0.1; `base_url` is what GOOGLE_GEMINI_BASE_URL is set to."""

    def __init__(self, replies: dict[str, list[dict[str, Any]]]) -> None:
        self.replies = replies
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._embedder = HashingEmbedder(384)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeGemini:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def generations(self, status: int | None = None) -> list[Request]:
        """The generateContent requests received (optionally only those answered `status`)."""
        return [
            r
            for r in self.requests
            if r.path.endswith(":generateContent") and status in (None, r.status)
        ]

    def embeddings(self) -> list[Request]:
        """The embedding requests received."""
        return [r for r in self.requests if "mbedContent" in r.path]

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], str | None]:
        """(status, JSON body, node) for one request."""
        if path.endswith(":generateContent"):
            node = node_of(body)
            with self._lock:
                queue = self.replies.get(node or "", [])
                if not queue:
                    message = f"no recorded reply left for node {node!r}"
                    return 500, {"error": {"code": 500, "message": message}}, node
                reply = queue.pop(0)
            return int(reply["status"]), reply["body"], node
        if path.endswith(":batchEmbedContents"):
            vectors = [self._vector(r) for r in body["requests"]]
            return 200, {"embeddings": [{"values": v} for v in vectors]}, None
        if path.endswith(":embedContent"):
            return 200, {"embedding": {"values": self._vector(body)}}, None
        return 404, {"error": {"code": 404, "message": f"unknown path {path}"}}, None

    def _vector(self, request: dict[str, Any]) -> list[float]:
        text = "".join(part.get("text", "") for part in request["content"]["parts"])
        size = int(request.get("outputDimensionality") or 3072)
        vector = self._embedder.embed([text])[0]
        padded = np.zeros(size, dtype=np.float32)
        padded[: min(size, vector.shape[0])] = vector[:size]
        return [float(x) for x in padded]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_: Any) -> None:  # keep pytest's output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0]
                status, payload, node = fake.answer(path, body)
                fake.requests.append(
                    Request(path, self.headers.get("x-goog-api-key"), body, node, status)
                )
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
