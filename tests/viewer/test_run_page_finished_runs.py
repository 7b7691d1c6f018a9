"""`grasp view` pages of finished runs in chromium: chain, concurrent hops, peer method, cache."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from websockets.sync.client import ClientConnection

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.cli.view import run_page_html
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.checkpoints import open_checkpointer
from nodes.llm.client import LlmClient
from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules, services
from tests.viewer.browser import tab
from tests.viewer.run_page_facts import CHAIN, FACTS, checkpointed_facts, open_page, scripted


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
