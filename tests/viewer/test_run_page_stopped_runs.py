"""`grasp view` pages of runs that failed or stopped and then resumed, and of an unknown thread."""

from __future__ import annotations

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
from nodes.llm.client import LlmCallError
from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules
from tests.viewer.run_page_facts import CHAIN, checkpointed_facts, open_page, scripted


async def test_a_failed_run_and_its_resumption_are_shown_where_they_happened(
    engine: Engine, database_url: str, chromium: ClientConnection, tmp_path: Path
) -> None:
    rules = chain_rules(build_corpus(engine))
    last_evaluate = rules.pop(-2)  # sq2's second evaluation: the model "fails" there
    model = ScriptedChatModel(rules=rules)
    svc = scripted(engine, database_url, model)
    thread = f"view-{uuid.uuid4().hex[:8]}"
    config: Any = {"configurable": {"thread_id": thread}}
    context = GraspContext(corpus="films", **PAPER_VOTE)
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        # The scripted model has no reply for that call: the run stops, failed.
        with pytest.raises(LlmCallError, match="no scripted reply matches"):
            await graph.ainvoke({"question": CHAIN}, config, context=context)
        stopped = await checkpointed_facts(graph, thread)
        failed_html = await run_page_html(database_url, thread)
        model.rules.insert(-1, last_evaluate)
        await graph.ainvoke(None, config, context=context)
        finished = await checkpointed_facts(graph, thread)
    resumed_html = await run_page_html(database_url, thread)

    facts, _ = open_page(chromium, failed_html, tmp_path, "failed")
    # sq2 is still in flight: its calls so far are drawn but not yet in the parent's tally.
    assert stopped["input"] == 300 + 470  # plan + sq1
    assert (facts["status"], facts["input"], facts["calls"]) == ("failed", 770, 4)
    assert facts["chartInput"] == 770
    # sq2's rewrite, both selections and its first evaluation (the second is the one that failed)
    assert facts["chartCalls"] == 4 + 4
    assert facts["agentStatus"] == {"1": "done", "2": "failed"}
    assert facts["rounds"] == {"1": 1, "2": 2} == stopped["rounds"]
    assert "error" in facts["incidents"] and "resumed" not in facts["incidents"]
    assert facts["answer"] == "(none yet)"

    facts, _ = open_page(chromium, resumed_html, tmp_path, "resumed")
    assert finished["input"] == 1770
    assert (facts["status"], facts["input"], facts["output"]) == ("done", 1770, 181)
    assert facts["rounds"] == finished["rounds"] == {"1": 1, "2": 2}
    assert (facts["chartInput"], facts["chartCalls"]) == (1770, 10)
    assert facts["incidents"].count("resumed") == 1 and "error" in facts["incidents"]
    assert facts["answer"] == "Lisbon"


def test_grasp_view_of_an_unknown_thread_says_so_in_one_line(
    database_url: str, monkeypatch: Any, capsys: Any
) -> None:
    from graphs.cli.main import main

    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["view", "no-such-thread"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "error: NoSuchThread: no checkpoints for thread 'no-such-thread'"
    assert main(["view"]) == 1
    assert "give a THREAD" in capsys.readouterr().err


async def test_a_run_stopped_between_steps_then_resumed_by_a_new_invocation(
    engine: Engine, database_url: str, chromium: ClientConnection, tmp_path: Path
) -> None:
    model = ScriptedChatModel(rules=chain_rules(build_corpus(engine)))
    thread = f"view-{uuid.uuid4().hex[:8]}"
    context = GraspContext(corpus="films", **PAPER_VOTE)

    def config(attempt: str) -> Any:
        # Each invocation names itself in the checkpoint metadata (as the dev server's run_id).
        return {"configurable": {"thread_id": thread}, "metadata": {"grasp_attempt": attempt}}

    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(scripted(engine, database_url, model), saver)
        updates = graph.astream(
            {"question": CHAIN}, config("first"), context=context, durability="sync"
        )
        async for update in updates:
            if "sub_agent" in update:
                break  # the process "dies" once the first hop is back
        await updates.aclose()
        stopped = await checkpointed_facts(graph, thread)
        stopped_html = await run_page_html(database_url, thread)
        await graph.ainvoke(None, config("second"), context=context, durability="sync")
    resumed_html = await run_page_html(database_url, thread)

    facts, _ = open_page(chromium, stopped_html, tmp_path, "stopped")
    assert (facts["status"], facts["planNodes"], facts["planEdges"]) == ("unfinished", 2, 1)
    assert facts["rounds"] == stopped["rounds"] == {"1": 1}
    assert facts["supersteps"] == {"1": "3", "2": ""}  # sq2 never ran
    assert facts["columns"] == ["superstep 3", "not run (layer 2)"]
    assert (facts["input"], facts["chartInput"]) == (stopped["input"], 770)
    assert facts["incidents"] == []

    facts, _ = open_page(chromium, resumed_html, tmp_path, "resumed")
    assert (facts["status"], facts["input"], facts["output"]) == ("done", 1770, 181)
    assert facts["rounds"] == {"1": 1, "2": 2}
    assert facts["incidents"] == ["resumed"]
    assert facts["answer"] == "Lisbon"
