"""`grasp view --eval DIR` over a results folder: tables, inline plots with their settings, and
question rows linked to run pages that `grasp view` wrote from the real checkpoints."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from websockets.sync.client import ClientConnection

from evals.results import write_jsonl
from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.cli.main import build_parser
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.checkpoints import open_checkpointer
from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules
from tests.viewer.browser import tab
from tests.viewer.run_page_facts import CHAIN, scripted

FACTS = """JSON.stringify({
  ready: document.body.dataset.viewerReady,
  methods: +document.body.dataset.methods,
  rows: document.querySelectorAll('#questions tr.question').length,
  linked: [...document.querySelectorAll('#questions a.run-link')].map(a => a.getAttribute('href')),
  plots: [...document.querySelectorAll('figure.plot')].map(f => f.dataset.plot),
  loaded: [...document.querySelectorAll('figure.plot img')].every(i => i.complete && i.naturalWidth > 300),
  captions: [...document.querySelectorAll('figure.plot figcaption')].map(c => c.textContent),
  summaryRows: document.querySelectorAll('table')[0].querySelectorAll('tbody tr').length,
})"""


def record(qid: str, hops: int, em: float, thread: str | None, **cost: Any) -> dict[str, Any]:
    return {
        "id": qid,
        "question": f"question {qid}?",
        "dataset": "musique",
        "hops": hops,
        "prediction": "x",
        "gold": ["x" if em else "y"],
        "em": em,
        "f1": em,
        "judge_strict": bool(em),
        "judge_lenient": bool(em),
        "thread_id": thread,
        **cost,
    }


async def test_the_eval_page_links_questions_to_their_run_pages(
    engine: Engine,
    database_url: str,
    chromium: ClientConnection,
    tmp_path: Path,
    monkeypatch: Any,
    capsys: Any,
) -> None:
    model = ScriptedChatModel(rules=chain_rules(build_corpus(engine)))
    thread = f"eval-{uuid.uuid4().hex[:8]}"
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(scripted(engine, database_url, model), saver)
        await graph.ainvoke(
            {"question": CHAIN},
            {"configurable": {"thread_id": thread}},
            context=GraspContext(corpus="films", **PAPER_VOTE),
        )
    results = tmp_path / "films"
    cost = {"tokens": 1951, "indexing_tokens": 100, "total_tokens": 2051, "calls": 10}
    write_jsonl(
        results / "grasp.jsonl",
        [
            record("2hop__a", 2, 1.0, thread, **cost, wall_s=0.4),
            record("3hop__b", 3, 0.0, "never-checkpointed", **cost, wall_s=0.5),
        ],
    )
    dense_cost = {"tokens": 400, "indexing_tokens": 0, "total_tokens": 400, "calls": 1}
    write_jsonl(
        results / "dense.jsonl",
        [
            record("2hop__a", 2, 0.0, None, **dense_cost),
            record("3hop__b", 3, 1.0, None, **dense_cost),
        ],
    )
    (results / "grasp.summary.json").write_text(json.dumps({"questions": 2, "p_samples": 5}))
    write_jsonl(
        results / "cache" / "closed_book.jsonl",
        [
            {"model": "gemma", "question_id": "2hop__a", "samples": 5, "correct": 0, "p": 1 / 7},
            {"model": "gemma", "question_id": "3hop__b", "samples": 5, "correct": 1, "p": 2 / 7},
        ],
    )
    write_jsonl(
        results / "retrieval" / "grasp-single.jsonl",
        [
            {"id": "2hop__a", "hops": 2, "recall": {"2": 0.5, "5": 1.0, "10": 1.0}},
            {"id": "3hop__b", "hops": 3, "recall": {"2": 0.0, "5": 0.5, "10": 1.0}},
        ],
    )
    monkeypatch.setenv("DATABASE_URL", database_url)
    args = build_parser().parse_args(["view", "--eval", str(results)])
    assert await args.handler(args) == 0
    out = results / "report.html"
    assert capsys.readouterr().out.strip() == str(out.resolve())
    run_page = results / "runs" / f"{thread}.html"
    assert run_page.exists() and not (results / "runs" / "never-checkpointed.html").exists()

    with tab(chromium) as page:
        page.open(out)
        facts = json.loads(page.evaluate(FACTS))
        page.screenshot(tmp_path / "eval.png")
        # The link opens the run's own page.
        page.open(results / facts["linked"][0])
        opened = page.evaluate("document.body.dataset.thread + ' ' + document.body.dataset.calls")
        assert page.errors == [], page.errors

    assert facts["ready"] == "1"
    assert (facts["methods"], facts["rows"], facts["summaryRows"]) == (2, 4, 6)  # 2 × (all, 2, 3)
    assert facts["linked"] == [f"runs/{thread}.html"]
    assert facts["plots"] == ["accuracy_vs_tokens", "success_economy_by_hops", "recall"]
    assert facts["loaded"] is True
    # The settings the plots were made under are in their captions.
    assert (
        "grasp (n=2, questions=2, p_samples=5, judge on, datasets musique)" in facts["captions"][0]
    )
    assert "closed-book p from gemma (5 samples per question)" in facts["captions"][1]
    assert facts["captions"][2] == "Results films: grasp-single n=2."
    assert opened == f"{thread} 10"
