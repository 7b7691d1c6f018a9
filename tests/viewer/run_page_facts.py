"""A run page's DOM facts in headless chromium, the same facts from the checkpoints, and a scripted
services bundle for the runs the viewer tests draw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langgraph.pregel import Pregel
from sqlalchemy import Engine
from websockets.sync.client import ClientConnection

from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.checkpoints import last_run, read_steps, sub_agent_namespace
from graphs.runtime.services import Services
from nodes.llm.client import LlmClient
from tests.fixtures.films import services
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
