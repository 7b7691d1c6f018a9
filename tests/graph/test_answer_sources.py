"""GRASP in the chat form: messages in, one AI message out, its answer cited from what the hops read."""

import re
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine

from graphs.agent.context import GraspContext
from graphs.agent.graph import GraspGraph, build_grasp_graph
from store.corpora import corpus_id
from store.passage_writes import add_passages
from tests.fixtures.films import CORPUS, PAPER_VOTE, PLAN, build_corpus, chain_rules, services
from tests.graph.conversation_script import (
    FIRST,
    FOLLOW_UP,
    HISTORY_LINE,
    conversation_graph,
)

CHAIN = "Where was the director of Blue Harbor born?"
DIRECTED = "Blue Harbor was directed by Tomas Reyd."
BORN = "Tomas Reyd was born in Lisbon in 1950."


def passage_id(engine: Engine, title: str) -> int:
    """The films passage of `title` (added again: the same text maps to its row)."""
    text = next(" ".join(props) for t, props, _ in CORPUS if t == title)
    return add_passages(engine, corpus_id(engine, "films"), [(title, text)])[0].id


async def run(graph: GraspGraph, thread: str, given: dict[str, Any], **context: Any) -> Any:
    config: Any = {"configurable": {"thread_id": thread}}
    events: list[dict[str, Any]] = []
    async for part in graph.astream(
        given,
        config,
        context=GraspContext(corpus="films", **{**PAPER_VOTE, **context}),
        stream_mode="custom",
    ):
        events.append(part)
    return (await graph.aget_state(config)).values, events


async def test_a_chained_answer_cites_each_hop_from_the_round_that_read_it(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    # The director's passage was indexed from a file: its citation names it.
    add_passages(
        engine,
        corpus_id(engine, "films"),
        [("Blue Harbor", " ".join(CORPUS[0][1]))],
        source="films/blue_harbor.md",
    )
    graph = build_grasp_graph(svc, InMemorySaver())

    state, events = await run(graph, "cite-1", {"messages": [{"role": "user", "content": CHAIN}]})

    expected = [
        {
            "passage_id": passage_id(engine, "Blue Harbor"),
            "title": "Blue Harbor",
            "source": "films/blue_harbor.md",
            "text": DIRECTED,
            "hop": 1,
            "round": 1,
            "verified": True,
        },
        {
            "passage_id": passage_id(engine, "Tomas Reyd"),
            "title": "Tomas Reyd",
            "source": "",
            "text": BORN,
            "hop": 2,
            "round": 2,  # hop 2 found nothing in its first round
            "verified": True,
        },
    ]
    assert state["question"] == CHAIN and state["final_answer"] == "Lisbon"
    assert state["citations"] == expected
    (answer,) = [e for e in events if e["event"] == "answer"]
    assert answer["citations"] == expected
    # The thread is its messages: the question, then the answer with standard annotations.
    human, reply = state["messages"]
    assert isinstance(human, HumanMessage) and human.text == CHAIN
    assert isinstance(reply, AIMessage) and reply.text == "Lisbon"
    (block,) = reply.content_blocks
    assert block["type"] == "text"
    annotations = block.get("annotations", [])
    assert [a["type"] for a in annotations] == ["citation", "citation"]
    assert [(a.get("title"), a.get("cited_text")) for a in annotations] == [
        ("Blue Harbor", DIRECTED),
        ("Tomas Reyd", BORN),
    ]
    first = annotations[0]
    assert (first.get("start_index"), first.get("end_index")) == (0, len("Lisbon"))
    own = {k: v for k, v in expected[0].items() if k not in ("title", "text")}
    assert first.get("extras") == {"number": 1, **own}
    # Only the hops' ids left the sub-agents, never their texts.
    assert {k: [r["ids"] for r in v["rounds"]] for k, v in state["hop_reads"].items()} == {
        1: [[expected[0]["passage_id"]]],
        2: [[], [expected[1]["passage_id"], expected[0]["passage_id"]]],
    }


async def test_a_conversation_in_messages_resolves_the_follow_up(
    engine: Engine, database_url: str
) -> None:
    graph, model = conversation_graph(engine, database_url)

    first, _ = await run(graph, "conv-m", {"messages": [HumanMessage(FIRST)]})
    second, _ = await run(graph, "conv-m", {"messages": [HumanMessage(FOLLOW_UP)]})

    assert first["final_answer"] == "Tomas Reyd" and second["final_answer"] == "Lisbon"
    assert [(type(m).__name__, m.text) for m in second["messages"]] == [
        ("HumanMessage", FIRST),
        ("AIMessage", "Tomas Reyd"),
        ("HumanMessage", FOLLOW_UP),
        ("AIMessage", "Lisbon"),
    ]
    plans = [p for p in model.prompts if p.startswith(PLAN)]
    assert f"{HISTORY_LINE}\n\nQuestion: {FOLLOW_UP}" in plans[1]
    assert [c["text"] for c in second["citations"]] == [BORN]
    assert second["turn"] == 2 and [t["question"] for t in second["turns"]] == [FIRST, FOLLOW_UP]


async def test_a_conversation_given_at_once_and_the_question_form_both_keep_messages(
    engine: Engine, database_url: str
) -> None:
    graph, model = conversation_graph(engine, database_url)

    # A client that kept the conversation itself sends it whole: the planner sees it.
    given = [HumanMessage(FIRST), AIMessage("Tomas Reyd"), HumanMessage(FOLLOW_UP)]
    state, _ = await run(graph, "conv-once", {"messages": given})
    assert state["final_answer"] == "Lisbon" and state["turn"] == 1
    (plan,) = [p for p in model.prompts if p.startswith(PLAN)]
    assert re.search(re.escape(f"{HISTORY_LINE}\n\nQuestion: {FOLLOW_UP}"), plan)

    # {"question": …} still works; its question is appended as a human message.
    state, _ = await run(graph, "conv-q", {"question": FIRST})
    assert [(type(m).__name__, m.text) for m in state["messages"]] == [
        ("HumanMessage", FIRST),
        ("AIMessage", "Tomas Reyd"),
    ]
