"""The peers in the chat form: messages in, an AI message out, cited from the passages they read."""

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine

from graphs.peers.registry import build_method_graph, method_context
from graphs.runtime.services import Services
from tests.fixtures.films import services
from tests.fixtures.peers import ANSWER, CLOSED_BOOK, DECOMPOSE, FINDINGS, films_with_graph, rule

QUESTION = "Where was the director of Blue Harbor born?"
DIRECTED = "Blue Harbor was directed by Tomas Reyd."
BORN = "Tomas Reyd was born in Lisbon in 1950."


async def ask(
    method: str, svc: Services, thread: str, given: dict[str, Any], **settings: Any
) -> dict[str, Any]:
    graph = build_method_graph(method, svc, InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    return dict(
        await graph.ainvoke(given, config, context=method_context(method, "films", **settings))
    )


def annotations(message: AIMessage) -> list[dict[str, Any]]:
    (block,) = message.content_blocks
    return [dict(a) for a in block.get("annotations", [])]


async def test_a_reader_cites_the_passage_that_states_its_answer(
    engine: Engine, database_url: str
) -> None:
    ids = films_with_graph(engine)
    svc = services(engine, database_url, [rule(ANSWER, QUESTION, reply={"answer": "Lisbon"})])

    state = await ask("bm25", svc, "bm25-chat", {"messages": [HumanMessage(QUESTION)]}, k=2)

    assert state["question"] == QUESTION and state["final_answer"] == "Lisbon"
    assert state["citations"] == [
        {
            "passage_id": ids["Tomas Reyd"],
            "title": "Tomas Reyd",
            "source": "",
            "text": BORN,
            "hop": None,
            "round": None,
            "verified": True,
        }
    ]
    human, reply = state["messages"]
    assert isinstance(human, HumanMessage) and isinstance(reply, AIMessage)
    assert reply.text == "Lisbon"
    assert [(a["cited_text"], a["extras"]["verified"]) for a in annotations(reply)] == [
        (BORN, True)
    ]


async def test_an_unstated_answer_is_cited_unverified_and_a_thread_keeps_its_messages(
    engine: Engine, database_url: str
) -> None:
    ids = films_with_graph(engine)
    svc = services(
        engine, database_url, [rule(ANSWER, QUESTION, reply={"answer": "Porto"}, times=2)]
    )
    graph = build_method_graph("dense", svc, InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "dense-chat"}}
    context = method_context("dense", "films", k=2)

    await graph.ainvoke({"question": QUESTION}, config, context=context)
    state = await graph.ainvoke({"messages": [HumanMessage(QUESTION)]}, config, context=context)

    # Dense k=2 shows Blue Harbor and Lena Marsh; neither says Porto: the closest sentence.
    (citation,) = state["citations"]
    assert citation["passage_id"] == ids["Blue Harbor"] and citation["verified"] is False
    assert [(type(m).__name__, m.text) for m in state["messages"]] == [
        ("HumanMessage", QUESTION),
        ("AIMessage", "Porto"),
        ("HumanMessage", QUESTION),
        ("AIMessage", "Porto"),
    ]


async def test_self_ask_cites_each_sub_answer_and_closed_book_cites_nothing(
    engine: Engine, database_url: str
) -> None:
    ids = films_with_graph(engine)
    rules = [
        rule(
            DECOMPOSE,
            QUESTION,
            reply={"sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"]},
        ),
        rule(ANSWER, "Question: Who directed Blue Harbor?", reply={"answer": "Tomas Reyd"}),
        rule(ANSWER, "Question: Where was Tomas Reyd born?", reply={"answer": "Lisbon"}),
        rule(FINDINGS, QUESTION, reply={"answer": "Lisbon"}),
        rule(CLOSED_BOOK, QUESTION, reply={"answer": "Paris"}),
    ]
    svc = services(engine, database_url, rules)

    state = await ask("self-ask", svc, "self-ask-chat", {"messages": [HumanMessage(QUESTION)]}, k=1)
    assert [(c["passage_id"], c["text"], c["hop"]) for c in state["citations"]] == [
        (ids["Blue Harbor"], DIRECTED, 1),
        (ids["Tomas Reyd"], BORN, 2),
    ]
    assert state["messages"][-1].text == "Lisbon"

    closed = await ask("none", svc, "none-chat", {"messages": [HumanMessage(QUESTION)]})
    assert closed["citations"] == [] and closed["messages"][-1].text == "Paris"
    assert annotations(closed["messages"][-1]) == []
