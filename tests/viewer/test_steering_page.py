"""The run page of a reviewed and forked run: its review decisions and its branches side by side."""

import re
from typing import Any

from langgraph.types import Command
from sqlalchemy import Engine

from graphs.agent.context import GraspContext
from graphs.agent.fork import fork_metadata, plan_fork, start_fork
from graphs.agent.graph import build_grasp_graph
from graphs.cli.view import run_page_html
from graphs.runtime.branches import Checkpoint, chain_to
from graphs.runtime.checkpoints import open_checkpointer, read_all_steps
from tests.fixtures.films import PAPER_VOTE, build_corpus, services
from tests.fixtures.steering import QUESTION, REWORDED, steering_rules

THREAD = "page-steered"


async def test_the_page_shows_the_review_and_the_branches(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, steering_rules(build_corpus(engine)))
    context = GraspContext(corpus="films", review_plan=True, **PAPER_VOTE)
    config: Any = {"configurable": {"thread_id": THREAD}}
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        await graph.ainvoke({"question": QUESTION}, config, context=context)
        edit = {"sub_questions": ["Who directed Blue Harbor?", "Where was #3 born?"]}
        await graph.ainvoke(Command(resume={"type": "edit", "args": edit}), config, context=context)
        edit = {"sub_questions": ["Who directed Blue Harbor?", REWORDED]}
        await graph.ainvoke(Command(resume={"type": "edit", "args": edit}), config, context=context)
        every = [Checkpoint.of_snapshot(s) for s in await read_all_steps(graph, THREAD)]
        plan = plan_fork(chain_to(every), "synthesis")
        fork = await start_fork(
            graph, THREAD, plan, fork_metadata(plan, {"max_iterations": 2}, None)
        )
        await graph.ainvoke(None, fork, context=GraspContext(corpus="films", **PAPER_VOTE))

    html = await run_page_html(database_url, THREAD)

    assert 'data-branches="2"' in html
    rows = re.findall(r'data-branch="[^"]+" data-current="(\w+)" data-spent-input="(\d+)"', html)
    assert rows == [("false", "1420"), ("true", "180")]  # the synthesis alone was paid again
    assert "fork at synthesis" in html and "max_iterations=2" in html
    actions = re.findall(r'<li class="review" data-action="(\w+)">', html)
    assert actions == ["refused", "edit"]
    assert "the edit is refused: sub-question 2 refers to #3" in html
    assert f"<li>{REWORDED}</li>" in html  # the edit's new sub-question, after
    # The page details the latest branch: one synthesis step and call, not the original's too.
    assert html.count('<td>synthesize</td><td><span class="badge done">') == 1
    assert '<td>synthesize</td><td class="num">180</td>' in html
