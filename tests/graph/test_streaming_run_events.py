"""Streaming a GRASP run: progress events and the answer's tokens arrive while the run goes on."""

import json
from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine

from graphs.agent.answer_deltas import answer_text as shown_answer
from graphs.agent.context import GraspContext
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.services import Services
from nodes.llm.client import LlmClient
from nodes.llm.reply import partial_field
from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules, services

QUESTION = "Where was the director of Blue Harbor born?"
SYNTHESIS_REPLY = json.dumps(
    {"answer": "Lisbon", "justification": "Tomas Reyd directed Blue Harbor and was born in Lisbon."}
)
MODES = ["updates", "messages", "custom"]


async def stream(
    graph: GraspGraph, thread: str, *, subgraphs: bool, question: str = QUESTION
) -> list[tuple[str, Any]]:
    """Every event of one run as (mode, payload), in arrival order.

    When the first answer chunk arrives, the checkpointed state is read: a run that is still on
    its synthesize step has not ended.
    """
    config: Any = {"configurable": {"thread_id": thread}}
    events: list[tuple[str, Any]] = []
    async for item in graph.astream(
        {"question": question},
        config,
        context=GraspContext(corpus="films", **PAPER_VOTE),
        stream_mode=MODES,
        subgraphs=subgraphs,
    ):
        mode, payload = (item[1], item[2]) if subgraphs else (item[0], item[1])
        if mode == "messages":
            message, metadata = payload
            node = metadata["langgraph_node"]
            if node == "synthesize" and not any(e[0] == "answer_token" for e in events):
                pending = (await graph.aget_state(config)).next
                events.append(("state_at_first_answer_token", pending))
            kind = "answer_token" if node == "synthesize" else f"tokens:{node}"
            if not isinstance(message, AIMessageChunk):  # a message a node wrote, whole
                kind = f"message:{node}"
            events.append((kind, message))
        elif mode == "custom":
            events.append(("custom", payload))
        else:
            events.append(("updates", sorted(payload)))
    return events


def custom(events: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [payload for kind, payload in events if kind == "custom"]


def answer_text(events: list[tuple[str, Any]]) -> str:
    chunks: list[BaseMessage] = [p for kind, p in events if kind == "answer_token"]
    return "".join(str(chunk.content) for chunk in chunks)


async def test_progress_events_come_in_order_with_hop_indices(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    events = await stream(build_grasp_graph(svc, InMemorySaver()), "stream-1", subgraphs=True)
    # Even with subgraphs, the plan, rewrite, selection and evaluation calls stream no tokens on
    # "messages": a chat client sees the question the plan step recorded, the answer's tokens
    # and the answer message.
    streamed = [(k, p) for k, p in events if k.startswith(("tokens:", "answer_token", "message:"))]
    assert {kind for kind, _ in streamed} == {"answer_token", "message:plan", "message:synthesize"}
    asked = [p for kind, p in streamed if kind == "message:plan"]
    assert [(m.type, m.text) for m in asked] == [("human", QUESTION)]

    names = [
        (e["event"], e.get("index"), e.get("round"))
        for e in custom(events)
        if e["event"] not in ("answer_delta", "tokens")  # tokens: tests/graph/test_token_events.py
    ]
    assert names == [
        ("planning", None, None),
        ("plan", None, None),
        ("hop_started", 1, None),
        ("searching", 1, 1),
        ("reading", 1, 1),
        ("hop_done", 1, None),
        ("hop_started", 2, None),
        ("searching", 2, 1),
        ("reading", 2, 1),
        ("searching", 2, 2),
        ("reading", 2, 2),
        ("hop_done", 2, None),
        ("synthesizing", None, None),
        ("answer", None, None),
    ]
    by_name = {(e["event"], e.get("index"), e.get("round")): e for e in custom(events)}
    assert by_name[("planning", None, None)] == {
        "event": "planning",
        "turn": 1,
        "question": QUESTION,
    }
    assert [sq["text"] for sq in by_name[("plan", None, None)]["sub_questions"]] == [
        "Who directed Blue Harbor?",
        "Where was #1 born?",
    ]
    # The second hop is announced with the first hop's answer already filled in.
    assert by_name[("hop_started", 2, None)] == {
        "event": "hop_started",
        "index": 2,
        "of": 2,
        "question": "Where was Tomas Reyd born?",
    }
    assert by_name[("searching", 2, 2)]["query"] == "Tomas Reyd was born in a city."
    assert by_name[("reading", 1, 1)]["passages"] >= 1
    assert by_name[("hop_done", 1, None)]["answer"] == "Tomas Reyd"
    answer = by_name[("answer", None, None)]
    assert {k: v for k, v in answer.items() if k != "citations"} == {
        "event": "answer",
        "answer": "Lisbon",
        "justification": "Tomas Reyd directed Blue Harbor and was born in Lisbon.",
    }
    # The answer's sources come with it: each hop's supporting sentence.
    assert [(c["hop"], c["round"], c["text"]) for c in answer["citations"]] == [
        (1, 1, "Blue Harbor was directed by Tomas Reyd."),
        (2, 2, "Tomas Reyd was born in Lisbon in 1950."),
    ]


async def test_answer_tokens_stream_before_the_run_ends(engine: Engine, database_url: str) -> None:
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    events = await stream(build_grasp_graph(svc, InMemorySaver()), "stream-2", subgraphs=False)
    kinds = [kind for kind, _ in events]

    # The scripted model streams 8 characters a chunk: the reply arrives in many pieces, whole.
    assert answer_text(events) == SYNTHESIS_REPLY
    assert kinds.count("answer_token") > len(SYNTHESIS_REPLY) // 8
    # When the first piece arrived the run was still inside its synthesize step.
    assert ("state_at_first_answer_token", ("synthesize",)) in events
    first_token = kinds.index("answer_token")
    assert kinds.index("state_at_first_answer_token") == first_token - 1
    answer_event = next(
        i for i, (k, p) in enumerate(events) if k == "custom" and p["event"] == "answer"
    )
    last_update = max(i for i, (k, p) in enumerate(events) if k == "updates")
    assert first_token < answer_event < last_update
    assert events[last_update] == ("updates", ["synthesize"])
    # The turn's answer message comes whole after its tokens: the answer with its sources.
    (message,) = [p for k, p in events if k == "message:synthesize"]
    assert kinds.index("message:synthesize") > max(
        i for i, k in enumerate(kinds) if k == "answer_token"
    )
    assert message.text == "Lisbon" and len(message.content_blocks[0]["annotations"]) == 2
    # Only the answer streams: the planner's JSON is tagged nostream (hops' events stay inside).
    assert {k for k in kinds if k.startswith("tokens:")} == set()
    assert [e["event"] for e in custom(events)] == [
        "planning",
        "plan",
        "tokens",  # the planner's call (the hops' events stay inside them)
        "hop_started",
        "hop_started",
        "synthesizing",
        "answer_delta",  # "Lisb" from the chunk '": "Lisb'
        "answer_delta",  # "on"
        "tokens",  # the synthesis's call, once it is done
        "answer",
    ]
    # The answer's words arrive on the custom stream while the answer field grows.
    texts = [e.get("text") for e in custom(events) if e["event"] != "tokens"]
    assert texts[-3:] == ["Lisb", "on", None]
    first_delta = next(i for i, (k, p) in enumerate(events) if k == "custom" and "text" in p)
    assert first_token < first_delta < answer_event
    growing = [partial_field(answer_text(events[: i + 1]), "answer") for i in range(len(events))]
    assert "Lisb" in growing and growing[-1] == "Lisbon"


async def test_a_client_of_the_custom_stream_alone_gets_the_answer_in_one_delta(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    graph = build_grasp_graph(svc, InMemorySaver())
    config: Any = {"configurable": {"thread_id": "stream-custom"}}
    events = [
        event
        async for event in graph.astream(
            {"question": QUESTION},
            config,
            context=GraspContext(corpus="films", **PAPER_VOTE),
            stream_mode="custom",
        )
    ]
    # Nobody asked for "messages", so the model did not stream: the answer comes whole, once.
    assert [e["text"] for e in events if e["event"] == "answer_delta"] == ["Lisbon"]
    assert events[-1]["event"] == "answer" and shown_answer(events) == "Lisbon"


async def test_streamed_calls_still_count_their_tokens(engine: Engine, database_url: str) -> None:
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    graph = build_grasp_graph(svc, InMemorySaver())
    await stream(graph, "stream-3", subgraphs=True)

    state = (await graph.aget_state({"configurable": {"thread_id": "stream-3"}})).values
    # The same totals as the unstreamed run in test_grasp_graph: usage rides on the last chunk.
    tokens = state["tokens"]
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]) == (1770, 181, 10)
    assert state["final_answer"] == "Lisbon"


async def test_a_cached_answer_still_arrives_as_chunks(engine: Engine, database_url: str) -> None:
    rules = chain_rules(build_corpus(engine))
    model = ScriptedChatModel(rules=rules)
    svc: Services = services(engine, database_url, rules)
    svc.llm = LlmClient(model=model, model_name="scripted-stream-cache", engine=engine)
    graph = build_grasp_graph(svc, InMemorySaver())
    await stream(graph, "stream-4a", subgraphs=False)
    calls = len(model.prompts)

    events = await stream(graph, "stream-4b", subgraphs=False)

    assert len(model.prompts) == calls  # every reply of the second run came from the cache
    assert answer_text(events) == SYNTHESIS_REPLY
    assert shown_answer(custom(events)) == "Lisbon"
    assert len([e for e in custom(events) if e["event"] == "answer_delta"]) > 1
    assert [k for k, _ in events].count("answer_token") > 1
    state = (await graph.aget_state({"configurable": {"thread_id": "stream-4b"}})).values
    synth = [r for r in state["tokens"]["records"] if r["node"] == "synthesize"]
    assert [r["cached"] for r in synth] == [True]
