"""A hop built on a hop that found nothing is not searched: its question would be "… unknown …"."""

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine

from graphs.agent.graph import build_grasp_graph
from graphs.cli.chat import AnswerPrinter
from tests.fixtures.films import (
    EVALUATE,
    PLAN,
    READER,
    SELECT,
    build_corpus,
    rule,
    services,
)
from tests.graph.test_answer_sources import run as run_with_events
from tests.graph.test_lean_agent import QUESTION, prompts

CHAIN_PLAN = rule(
    PLAN,
    f"Question: {QUESTION}",
    reply={
        "plan": "Find who directed Blue Harbor, then where that person was born.",
        "sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"],
    },
)


async def test_a_hop_built_on_an_unknown_answer_is_skipped_and_announced(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    svc = services(
        engine,
        database_url,
        [
            CHAIN_PLAN,
            rule(SELECT, "Looking for: Who directed", reply={"entity_ids": [ids["Blue Harbor"]]}),
            # Hop 1 reads its passages and finds no director: its answer is "unknown".
            rule(
                EVALUATE,
                "Sub-question: Who directed Blue Harbor?",
                reply={"observations": [], "action": "DONE", "answer": "unknown"},
            ),
            rule(READER, f"Question: {QUESTION}", reply={"answer": "unknown"}),
        ],
    )
    graph = build_grasp_graph(svc, checkpointer=InMemorySaver())
    state, events = await run_with_events(
        graph, "skip", {"question": QUESTION}, first_search="question", synthesis="reader"
    )

    # Hop 2 never searched "Where was unknown born?": one selection, one evaluation, the reader.
    asked = prompts(svc)
    kinds = [next(k for k in (PLAN, SELECT, EVALUATE, READER) if k in p) for p in asked]
    assert kinds == [PLAN, SELECT, EVALUATE, READER]
    assert not any("unknown born" in p for p in asked)
    assert state["answers"] == {1: "unknown", 2: "unknown"}
    names = [e["event"] for e in events]
    assert "hop_skipped" in names and names.count("hop_started") == 1
    (skip,) = [e for e in events if e["event"] == "hop_skipped"]
    assert skip == {
        "event": "hop_skipped",
        "index": 2,
        "of": 2,
        "question": "Where was #1 born?",
        "after": [1],
    }
    assert names.index("hop_skipped") < names.index("synthesizing")


def test_the_cli_says_a_hop_was_not_searched(capsys: pytest.CaptureFixture[str]) -> None:
    AnswerPrinter().progress(
        {"event": "hop_skipped", "index": 3, "of": 3, "question": "Who ruled #2?", "after": [2]}
    )
    assert capsys.readouterr().out == "hop 3 of 3: not searched (hop 2 found nothing)\n"
