"""The real langchain-google-genai client against a local stand-in for the Gemini REST API.

The default path for a key holder — Gemini chat in JSON mode, gemini-embedding-001 at 384
dimensions — runs end to end with no key and no network: a 429 is retried with backoff, replies
are parsed into GRASP's structures, and usageMetadata lands in the ledger and the run state.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from graphs.agent.graph import build_grasp_graph
from graphs.cli.main import main
from graphs.runtime.checkpoints import open_checkpointer
from store.engine import transaction
from store.ledger_models import LlmCall
from store.models import Entity, Passage, Proposition
from tests.providers.gemini_server import FakeGemini, Request, load_replies
from tests.providers.transcript import call_line, show

CHAT = "gemini-3-flash-preview"
PASSAGES = [
    {"title": "Blue Harbor", "text": "Blue Harbor is a 1998 film directed by Tomas Reyd."},
    {"title": "Tomas Reyd", "text": "Tomas Reyd is a director who was born in Lisbon."},
]
QUESTION = "Where was Tomas Reyd born?"


@pytest.fixture
def gemini(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeGemini]:
    """The fake API, and the environment a user sets to reach Gemini through a proxy."""
    with FakeGemini(load_replies()) as fake:
        monkeypatch.setenv("DATABASE_URL", database_url)
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        monkeypatch.delenv("GRASP_CHAT_MODEL", raising=False)  # a key makes Gemini the default
        monkeypatch.delenv("GRASP_EMBEDDER", raising=False)
        monkeypatch.setenv("GRASP_LLM_CACHE", "0")
        monkeypatch.setenv("GRASP_DATA_DIR", str(tmp_path / "data"))
        yield fake


def usage_of(request: Request, replies: dict[str, Any]) -> tuple[int, int]:
    """(input, output) tokens the recorded reply to `request` reported (output counts thoughts)."""
    meta = replies[request.node or ""]
    return (
        meta["promptTokenCount"],
        meta["candidatesTokenCount"] + meta.get("thoughtsTokenCount", 0),
    )


def recorded_usage() -> dict[str, Any]:
    """Each node's usageMetadata from the fixtures (one successful reply per node)."""
    usage = {}
    for node, replies in load_replies().items():
        usage[node] = next(r["body"]["usageMetadata"] for r in replies if r["status"] == 200)
    return usage


def ledger(engine: Engine, failed: bool = False) -> list[tuple[str, str, int, int, str | None]]:
    """The ledger's successful calls (or, with `failed`, its flagged failed attempts)."""
    with transaction(engine) as session:
        rows = session.execute(
            select(
                LlmCall.node,
                LlmCall.model,
                LlmCall.input_tokens,
                LlmCall.output_tokens,
                LlmCall.run_id,
            )
            .where(LlmCall.failed.is_(failed))
            .order_by(LlmCall.id)
        ).all()
    return [tuple(row) for row in rows]  # type: ignore[misc]


def test_index_and_ask_through_the_gemini_protocol(
    request: pytest.FixtureRequest,
    gemini: FakeGemini,
    engine: Engine,
    database_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(PASSAGES))
    usage = recorded_usage()
    model = f"gemini:{CHAT}@{gemini.base_url.removeprefix('http://')}"

    assert main(["index", str(corpus), "--corpus", "gem", "--extractor", "llm"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    # The 429 was answered, then the same request retried and served.
    extract_calls = gemini.generations()
    assert [r.status for r in extract_calls] == [429, 200]
    assert extract_calls[0].body == extract_calls[1].body
    assert {r.api_key for r in gemini.requests} == {"test-key"}
    sent = extract_calls[1].body
    assert sent["generationConfig"]["responseMimeType"] == "application/json"
    assert "Tomas Reyd" in sent["contents"][0]["parts"][0]["text"]
    # The structured reply became the graph.
    with transaction(engine) as session:
        assert sorted(session.execute(select(Passage.status)).scalars()) == ["done", "done"]
        propositions = set(session.execute(select(Proposition.text)).scalars())
        names = set(session.execute(select(Entity.canonical_name)).scalars())
    assert "Tomas Reyd was born in Lisbon." in propositions and len(propositions) == 4
    assert {"tomas reyd", "lisbon", "blue harbor"} <= names
    # Every embedding request asked gemini-embedding-001 for the store's 384 dimensions.
    embedded = [item for r in gemini.embeddings() for item in r.body["requests"]]
    assert embedded
    assert {item["outputDimensionality"] for item in embedded} == {384}
    assert {item["model"] for item in embedded} == {"models/gemini-embedding-001"}
    texts = {part["text"] for item in embedded for part in item["content"]["parts"]}
    assert "Tomas Reyd was born in Lisbon." in texts
    # Only the served attempt is billed, with usageMetadata's counts (thoughts are output).
    extract_tokens = usage_of(extract_calls[1], usage)
    assert ledger(engine) == [("extract", model, *extract_tokens, None)]
    assert ledger(engine, failed=True) == [("extract", model, 0, 0, None)]  # the 429, flagged

    thread = "gemini-ask"
    assert main(["ask", QUESTION, "--corpus", "gem", "--thread", thread]) == 0
    out = capsys.readouterr().out
    assert "answer: Lisbon" in out
    asked = gemini.generations()[2:]
    assert [r.node for r in asked] == [
        "plan",
        "rewrite",
        "select_entities",
        "evaluate",
        "synthesize",
    ]
    assert all(r.status == 200 for r in asked)
    assert all(not queue for queue in gemini.replies.values())  # every recorded reply served
    rows = [row for row in ledger(engine) if row[4] == thread]
    assert rows == [(r.node, model, *usage_of(r, usage), thread) for r in asked]
    tokens_in = sum(row[2] for row in rows)
    tokens_out = sum(row[3] for row in rows)
    assert f"tokens: {tokens_in} in / {tokens_out} out" in out

    async def state() -> dict[str, Any]:
        async with open_checkpointer(database_url) as saver:
            graph = build_grasp_graph(None, saver)
            snapshot = await graph.aget_state({"configurable": {"thread_id": thread}})
            return dict(snapshot.values)

    lines = [f"{r.path.rsplit('/', 1)[-1]}  {r.status}  {r.node or ''}" for r in gemini.requests]
    lines += [call_line(node, i, o) for node, _, i, o, _ in ledger(engine)]
    show(request.config, capsys, "gemini requests, then the ledger", lines)

    values = asyncio.run(state())
    assert values["final_answer"] == "Lisbon"
    tally = values["tokens"]
    assert (tally["calls"], tally["input_tokens"], tally["output_tokens"]) == (
        5,
        tokens_in,
        tokens_out,
    )
