"""A run page's sources in headless chromium: each [n] mark leads to its source, which shows the
passage with the supporting sentence highlighted and, for GRASP, links the sub-agent that read it."""

import json
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from sqlalchemy import Engine
from websockets.sync.client import ClientConnection

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.cli.view import run_page_html
from graphs.peers.registry import run_method
from graphs.runtime.checkpoints import open_checkpointer
from graphs.viewer.sources import sources_html
from store.corpora import corpus_id
from store.corpus_reads import corpus_passages
from store.passage_writes import add_passages
from tests.fixtures.films import CORPUS, PAPER_VOTE, build_corpus, chain_rules, services
from tests.fixtures.peers import ANSWER, films_with_graph, rule
from tests.viewer.browser import tab

CHAIN = "Where was the director of Blue Harbor born?"

# What the page shows of its sources, and where its links lead.
SOURCES = """JSON.stringify({
  answer: document.getElementById('answer').textContent,
  marks: [...document.querySelectorAll('#marks a')].map(a => a.getAttribute('href')),
  marksLead: [...document.querySelectorAll('#marks a')]
    .every(a => document.querySelector(a.getAttribute('href')) !== null),
  sources: [...document.querySelectorAll('#sources li.source')].map(li => ({
    id: li.id,
    passage: +li.dataset.passage,
    verified: li.dataset.verified,
    hop: li.dataset.hop,
    round: li.dataset.round,
    title: li.querySelector('b').textContent,
    marked: li.querySelector('mark').textContent,
    quote: li.querySelector('blockquote').textContent,
    agent: li.querySelector('a[href^="#agent-"]')?.getAttribute('href') ?? null,
    agentThere: !!document.querySelector(
      li.querySelector('a[href^="#agent-"]')?.getAttribute('href') || '#none'),
  })),
  warning: document.getElementById('unsupported')?.textContent ?? null,
})"""


def shown(chromium: ClientConnection, html: str, tmp_path: Path) -> tuple[dict[str, Any], str]:
    """The page's sources, and where clicking the second mark took the page."""
    path = tmp_path / f"page-{uuid.uuid4().hex[:6]}.html"
    path.write_text(html, encoding="utf-8")
    with tab(chromium) as page:
        page.open(path)
        facts = json.loads(page.evaluate(SOURCES))
        clicked = page.evaluate(
            "(() => { const a = document.querySelectorAll('#marks a')[1];"
            " if (a) { a.click(); } return location.hash; })()"
        )
        assert page.errors == [], page.errors
    return facts, str(clicked)


async def test_a_grasp_page_links_each_mark_to_its_highlighted_passage(
    engine: Engine, database_url: str, chromium: ClientConnection, tmp_path: Path
) -> None:
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    corpus = corpus_id(engine, "films")
    add_passages(engine, corpus, [("Blue Harbor", " ".join(CORPUS[0][1]))], source="films/bh.md")
    ids = {p.title: p.id for p in corpus_passages(engine, corpus)}
    thread = f"sources-{uuid.uuid4().hex[:8]}"
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        config: Any = {"configurable": {"thread_id": thread}}
        context = GraspContext(corpus="films", **PAPER_VOTE)
        await graph.ainvoke({"messages": [HumanMessage(CHAIN)]}, config, context=context)

    facts, clicked = shown(chromium, await run_page_html(database_url, thread), tmp_path)

    assert facts["answer"] == "Lisbon"
    assert facts["marks"] == ["#source-1", "#source-2"] and facts["marksLead"]
    assert clicked == "#source-2"
    assert facts["sources"] == [
        {
            "id": "source-1",
            "passage": ids["Blue Harbor"],
            "verified": "true",
            "hop": "1",
            "round": "1",
            "title": "Blue Harbor",
            "marked": "Blue Harbor was directed by Tomas Reyd.",
            # The whole passage, the supporting sentence highlighted in it.
            "quote": " ".join(CORPUS[0][1]),
            "agent": "#agent-1",
            "agentThere": True,
        },
        {
            "id": "source-2",
            "passage": ids["Tomas Reyd"],
            "verified": "true",
            "hop": "2",
            "round": "2",
            "title": "Tomas Reyd",
            "marked": "Tomas Reyd was born in Lisbon in 1950.",
            "quote": " ".join(CORPUS[1][1]),
            "agent": "#agent-2",
            "agentThere": True,
        },
    ]
    assert facts["warning"] is None


async def test_a_peer_page_shows_its_source_and_warns_when_none_states_the_answer(
    engine: Engine, database_url: str, chromium: ClientConnection, tmp_path: Path
) -> None:
    ids = films_with_graph(engine)
    svc = services(engine, database_url, [rule(ANSWER, reply={"answer": "Porto"})])
    thread = f"sources-{uuid.uuid4().hex[:8]}"
    async with open_checkpointer(database_url) as saver:
        await run_method(
            "dense", CHAIN, "films", services=svc, checkpointer=saver, thread_id=thread, k=2
        )

    facts, _ = shown(chromium, await run_page_html(database_url, thread), tmp_path)

    assert facts["answer"] == "Porto" and facts["marks"] == ["#source-1"]
    (source,) = facts["sources"]
    assert (source["passage"], source["verified"], source["hop"], source["agent"]) == (
        ids["Blue Harbor"],
        "false",
        "",
        None,
    )
    assert source["marked"] in source["quote"]
    assert facts["warning"].startswith("No source states the answer")


def test_a_notes_passage_keeps_its_lines(chromium: ClientConnection, tmp_path: Path) -> None:
    """A Markdown note's line breaks show as written; the cited sentence is still marked."""
    note = "# Blue Harbor\n\nA 1994 film.\n\n## Cast\n- Anna Lis plays his wife"
    citation = {
        "passage_id": 7,
        "title": "blue-harbor",
        "source": "/notes/films/blue-harbor.md",
        "text": "Anna Lis plays his wife",
        "hop": 1,
        "round": 1,
        "verified": True,
    }
    path = tmp_path / "note.html"
    path.write_text(f"<html><body>{sources_html([citation], {7: note})}</body></html>")
    with tab(chromium) as page:
        page.open(path)
        facts = json.loads(
            page.evaluate(
                "JSON.stringify({lines: document.querySelector('blockquote').innerText,"
                " marked: document.querySelector('mark').textContent,"
                " file: document.querySelector('li.source').textContent})"
            )
        )
        assert page.errors == [], page.errors
    assert facts["lines"].split("\n") == [
        "# Blue Harbor",
        "",
        "A 1994 film.",
        "",
        "## Cast",
        "- Anna Lis plays his wife",
    ]
    assert facts["marked"] == "Anna Lis plays his wife"
    assert "/notes/films/blue-harbor.md" in facts["file"]
