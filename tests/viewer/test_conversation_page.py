"""A two-turn conversation thread in `grasp view`: the turns in order, each turn's own page."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from websockets.sync.client import ClientConnection

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.cli.view import run_page_html
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.checkpoints import open_checkpointer
from graphs.viewer.trace import NoSuchThread
from tests.fixtures.films import PAPER_VOTE, build_corpus
from tests.graph.conversation_script import FIRST, FOLLOW_UP, conversation_rules
from tests.viewer.browser import tab
from tests.viewer.run_page_facts import scripted

TURNS = """JSON.stringify({
  turn: +document.body.dataset.turn,
  turns: +document.body.dataset.turns,
  listed: [...document.querySelectorAll('#turns li.turn')].map(li => +li.dataset.turn),
  questions: [...document.querySelectorAll('#turns li.turn b')].map(b => b.textContent),
  marked: document.getElementById('this-turn')?.dataset.turn,
  heading: document.querySelector('h1').textContent,
  answer: document.getElementById('answer').textContent,
  planNodes: +document.body.dataset.planNodes,
  input: +document.body.dataset.inputTokens,
})"""


def facts_of(chromium: ClientConnection, html: str, tmp_path: Path, name: str) -> dict[str, Any]:
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    with tab(chromium) as page:
        page.open(path)
        facts: dict[str, Any] = json.loads(page.evaluate(TURNS))
        page.screenshot(tmp_path / f"{name}.png")
        assert page.errors == [], page.errors
    return facts


async def test_turns_are_listed_in_order_and_each_has_its_page(
    engine: Engine, database_url: str, chromium: ClientConnection, tmp_path: Path
) -> None:
    model = ScriptedChatModel(rules=conversation_rules(build_corpus(engine)))
    svc = scripted(engine, database_url, model)
    thread = f"conv-{uuid.uuid4().hex[:8]}"
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        config: Any = {"configurable": {"thread_id": thread}}
        for question in (FIRST, FOLLOW_UP):
            await graph.ainvoke(
                {"question": question}, config, context=GraspContext(corpus="films", **PAPER_VOTE)
            )
        state = (await graph.aget_state(config)).values
    per_turn = [t["tokens"]["input_tokens"] for t in state["turns"]]

    latest = facts_of(chromium, await run_page_html(database_url, thread), tmp_path, "latest")
    first = facts_of(chromium, await run_page_html(database_url, thread, 1), tmp_path, "first")

    assert latest["turns"] == first["turns"] == 2
    assert latest["listed"] == first["listed"] == [1, 2]
    assert latest["questions"] == first["questions"] == [FIRST, FOLLOW_UP]
    assert (latest["turn"], latest["marked"], latest["heading"]) == (2, "2", FOLLOW_UP)
    assert (first["turn"], first["marked"], first["heading"]) == (1, "1", FIRST)
    assert (latest["answer"], first["answer"]) == ("Lisbon", "Tomas Reyd")
    assert [first["input"], latest["input"]] == per_turn  # each page: its own turn's tally
    assert first["planNodes"] == latest["planNodes"] == 1
    with pytest.raises(NoSuchThread, match="has 2 turn"):
        await run_page_html(database_url, thread, 3)
