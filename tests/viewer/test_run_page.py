"""A scripted GRASP run over the real PostgreSQL, its `grasp view` page opened in headless chromium:
the DOM must show the run's checkpointed facts, and the page must raise no JavaScript error."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.pregel import Pregel
from sqlalchemy import Engine
from websockets.sync.client import ClientConnection

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.cli.view import run_page_html
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.checkpoints import (
    last_run,
    open_checkpointer,
    read_steps,
    sub_agent_namespace,
)
from graphs.runtime.services import Services
from nodes.llm.client import LlmCallError, LlmClient
from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules, services
from tests.viewer.browser import tab

CHAIN = "Where was the director of Blue Harbor born?"

# What the page is asked: its data attributes and what it drew.
FACTS = """JSON.stringify({
  ready: document.body.dataset.viewerReady,
  status: document.body.dataset.status,
  planNodes: +document.body.dataset.planNodes,
  planEdges: +document.body.dataset.planEdges,
  input: +document.body.dataset.inputTokens,
  output: +document.body.dataset.outputTokens,
  calls: +document.body.dataset.calls,
  drawnNodes: document.querySelectorAll('svg.plan .plan-node').length,
  drawnEdges: document.querySelectorAll('svg.plan .plan-edge').length,
  columns: [...document.querySelectorAll('svg.plan .col-label')].map(t => t.textContent),
  supersteps: Object.fromEntries([...document.querySelectorAll('svg.plan .plan-node')]
    .map(n => [n.dataset.index, n.dataset.superstep])),
  rounds: Object.fromEntries([...document.querySelectorAll('section.agent')]
    .map(a => [a.dataset.index, a.querySelectorAll('.round').length])),
  agentStatus: Object.fromEntries([...document.querySelectorAll('section.agent')]
    .map(a => [a.dataset.index, a.dataset.status])),
  chartInput: [...document.querySelectorAll('svg.calls g.call')]
    .filter(g => g.dataset.inTally === 'true').reduce((s, g) => s + +g.dataset.input, 0),
  chartOutput: [...document.querySelectorAll('svg.calls g.call')]
    .filter(g => g.dataset.inTally === 'true').reduce((s, g) => s + +g.dataset.output, 0),
  chartCalls: document.querySelectorAll('svg.calls g.call').length,
  incidents: [...document.querySelectorAll('#incidents li')].map(li => li.dataset.kind),
  answer: document.getElementById('answer').textContent,
})"""


async def checkpointed_facts(graph: Pregel[Any, Any, Any, Any], thread: str) -> dict[str, Any]:
    """The same facts, read straight from the checkpoints (not through the viewer's code)."""
    steps = last_run(await read_steps(graph, thread))
    values = steps[-1].values
    rounds: dict[str, int] = {}
    for snapshot in steps:
        for task in snapshot.tasks:
            if task.name != "sub_agent":
                continue
            inner = await read_steps(graph, thread, sub_agent_namespace(task.id))
            index = next(s.values["index"] for s in inner if "index" in s.values)
            # A round is one evaluation, made or under way.
            rounds[str(index)] = sum(t.name == "evaluate" for s in inner for t in s.tasks)
    sub_questions = values.get("sub_questions", [])
    tokens = values.get("tokens", {})
    return {
        "planNodes": len(sub_questions),
        "planEdges": sum(len(sq["depends_on"]) for sq in sub_questions),
        "rounds": rounds,
        "input": tokens.get("input_tokens", 0),
        "output": tokens.get("output_tokens", 0),
        "calls": tokens.get("calls", 0),
    }


def scripted(engine: Engine, database_url: str, model: ScriptedChatModel) -> Services:
    svc = services(engine, database_url, [])
    svc.llm = LlmClient(model=model, model_name="scripted", engine=engine, use_cache=False)
    return svc


def open_page(
    chromium: ClientConnection, html: str, tmp_path: Path, name: str
) -> tuple[dict[str, Any], Path]:
    """Open the page, fail on any JavaScript error, return the DOM facts and a screenshot."""
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    with tab(chromium) as page:
        page.open(path)
        facts = json.loads(page.evaluate(FACTS))
        shot = page.screenshot(tmp_path / f"{name}.png")
        assert page.errors == [], page.errors
    assert shot.stat().st_size > 10_000  # a real picture, not an empty canvas
    return facts, shot


async def test_a_finished_chain_run_page_shows_its_checkpointed_facts(
    engine: Engine, database_url: str, chromium: ClientConnection, tmp_path: Path
) -> None:
    svc = scripted(engine, database_url, ScriptedChatModel(rules=chain_rules(build_corpus(engine))))
    thread = f"view-{uuid.uuid4().hex[:8]}"
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        config: Any = {"configurable": {"thread_id": thread}}
        await graph.ainvoke(
            {"question": CHAIN}, config, context=GraspContext(corpus="films", **PAPER_VOTE)
        )
        expected = await checkpointed_facts(graph, thread)
    html = await run_page_html(database_url, thread)
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html

    facts, shot = open_page(chromium, html, tmp_path, "chain")
    print(f"screenshot: {shot}")

    assert expected == {
        "planNodes": 2,
        "planEdges": 1,
        "rounds": {"1": 1, "2": 2},
        "input": 1770,
        "output": 181,
        "calls": 10,
    }
    assert {k: facts[k] for k in expected} == expected
    assert facts["ready"] == "1" and facts["status"] == "done"
    assert (facts["drawnNodes"], facts["drawnEdges"]) == (2, 1)
    # The chain's hops ran one after the other: two supersteps.
    assert facts["supersteps"] == {"1": "3", "2": "5"}
    assert facts["columns"] == ["superstep 3", "superstep 5"]
    assert (facts["chartInput"], facts["chartOutput"], facts["chartCalls"]) == (1770, 181, 10)
    assert facts["agentStatus"] == {"1": "done", "2": "done"}
    assert facts["answer"] == "Lisbon"
    assert facts["incidents"] == []


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


async def test_grasp_view_writes_a_page_where_concurrent_hops_share_a_superstep(
    engine: Engine,
    database_url: str,
    chromium: ClientConnection,
    tmp_path: Path,
    monkeypatch: Any,
    capsys: Any,
) -> None:
    from graphs.cli.main import build_parser
    from tests.fixtures.films import comparison_rules

    model = ScriptedChatModel(rules=comparison_rules(build_corpus(engine)))
    thread = f"view-{uuid.uuid4().hex[:8]}"
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(scripted(engine, database_url, model), saver)
        await graph.ainvoke(
            {"question": "Who was born first, Ivo Strand or Lena Marsh?"},
            {"configurable": {"thread_id": thread}},
            context=GraspContext(corpus="films", **PAPER_VOTE),
        )
        expected = await checkpointed_facts(graph, thread)
    monkeypatch.setenv("DATABASE_URL", database_url)
    out = tmp_path / "pages" / "comparison.html"
    args = build_parser().parse_args(["view", thread, "--out", str(out)])
    assert await args.handler(args) == 0
    assert capsys.readouterr().out.strip() == str(out.resolve())

    facts, _ = open_page(chromium, out.read_text(encoding="utf-8"), tmp_path, "comparison")
    assert expected == {
        "planNodes": 2,
        "planEdges": 0,
        "rounds": {"1": 1, "2": 1},
        "input": 1420,
        "output": 148,
        "calls": 8,
    }
    assert {k: facts[k] for k in expected} == expected
    assert facts["supersteps"] == {"1": "3", "2": "3"}  # both hops in one superstep
    assert facts["columns"] == ["superstep 3 · concurrent"]


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


async def test_a_peer_method_run_shows_its_own_steps(
    engine: Engine, database_url: str, chromium: ClientConnection, tmp_path: Path
) -> None:
    from graphs.peers.registry import run_method
    from tests.fixtures.peers import ANSWER, films_with_graph, rule

    films_with_graph(engine)
    svc = services(engine, database_url, [rule(ANSWER, reply={"answer": "Lisbon"})])
    thread = f"view-{uuid.uuid4().hex[:8]}"
    async with open_checkpointer(database_url) as saver:
        state = await run_method(
            "dense", CHAIN, "films", services=svc, checkpointer=saver, thread_id=thread, k=2
        )
    html = await run_page_html(database_url, thread)

    path = tmp_path / "dense.html"
    path.write_text(html, encoding="utf-8")
    with tab(chromium) as page:
        page.open(path)
        nodes = page.evaluate(
            "[...document.querySelectorAll('#steps tbody tr td:nth-child(2)')].map(td => td.textContent)"
        )
        facts = json.loads(page.evaluate(FACTS))
        assert page.errors == [], page.errors
    assert nodes == ["__start__", "start", "retrieve", "answer"]
    assert (facts["planNodes"], facts["rounds"], facts["status"]) == (0, {}, "done")
    tokens = state["tokens"]
    assert (
        (facts["input"], facts["output"], facts["calls"])
        == (
            tokens["input_tokens"],
            tokens["output_tokens"],
            tokens["calls"],
        )
        == (400, 6, 1)
    )
    assert (facts["chartInput"], facts["chartCalls"]) == (400, 1)
    assert facts["answer"] == "Lisbon"


async def test_calls_served_from_the_cache_are_marked(
    engine: Engine, database_url: str, chromium: ClientConnection, tmp_path: Path
) -> None:
    model = ScriptedChatModel(rules=chain_rules(build_corpus(engine)))
    svc = services(engine, database_url, [])
    svc.llm = LlmClient(model=model, model_name="scripted", engine=engine, use_cache=True)
    threads = [f"view-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        for thread in threads:  # the second run asks exactly what the first asked
            await graph.ainvoke(
                {"question": CHAIN},
                {"configurable": {"thread_id": thread}},
                context=GraspContext(corpus="films", **PAPER_VOTE),
            )
    marks = """JSON.stringify({
      cached: document.querySelectorAll('svg.calls g.call.cached').length,
      fresh: document.querySelectorAll('svg.calls g.call:not(.cached)').length,
      ledgerCached: +document.getElementById('ledger').dataset.cached,
    })"""
    seen = []
    for n, thread in enumerate(threads):
        path = tmp_path / f"cache-{n}.html"
        path.write_text(await run_page_html(database_url, thread), encoding="utf-8")
        with tab(chromium) as page:
            page.open(path)
            seen.append(json.loads(page.evaluate(marks)))
            assert page.errors == [], page.errors
    assert seen == [
        {"cached": 0, "fresh": 10, "ledgerCached": 0},
        {"cached": 10, "fresh": 0, "ledgerCached": 10},
    ]
