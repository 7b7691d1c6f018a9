"""`tokens` events: one per LLM call, with the turn's running total ending at the state's tally."""

from typing import Any

from langgraph.types import Command
from sqlalchemy import Engine

from graphs.agent.context import GraspContext
from graphs.agent.graph import build_grasp_graph
from graphs.runtime.checkpoints import open_checkpointer
from tests.fixtures.films import PAPER_VOTE, build_corpus, comparison_rules, services
from tests.fixtures.steering import GUIDANCE, QUESTION, steering_rules, stream


def tokens_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "tokens"]


def check_running_total(events: list[dict[str, Any]], tally: dict[str, Any]) -> None:
    """Each event adds its call to the total; the last total is the state's tally."""
    seen = {"input_tokens": 0, "output_tokens": 0, "calls": 0}
    for event in events:
        seen = {
            "input_tokens": seen["input_tokens"] + event["input"],
            "output_tokens": seen["output_tokens"] + event["output"],
            "calls": seen["calls"] + 1,
        }
        assert event["total"] == seen
    final = {k: tally[k] for k in ("input_tokens", "output_tokens", "calls")}
    assert events[-1]["total"] == final
    # The same calls as the state's records: node, hop and tokens.
    records = sorted((r["node"], r["agent"], r["input"], r["output"]) for r in tally["records"])
    hops = [
        (e["node"], f"sq{e['hop']}" if e["hop"] else None, e["input"], e["output"]) for e in events
    ]
    assert sorted(hops) == records


async def test_a_chain_reports_every_call_with_its_running_total(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, steering_rules(build_corpus(engine)))
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        config: Any = {"configurable": {"thread_id": "tokens-chain"}}
        context = GraspContext(corpus="films", **PAPER_VOTE)
        events = tokens_of(await stream(graph, {"question": QUESTION}, config, context))
        state = (await graph.aget_state(config)).values

    check_running_total(events, state["tokens"])
    assert [(e["node"], e["hop"]) for e in events] == [
        ("plan", None),
        ("rewrite", 1),
        ("select_entities", 1),
        ("evaluate", 1),
        ("rewrite", 2),
        ("select_entities", 2),
        ("evaluate", 2),
        ("select_entities", 2),
        ("evaluate", 2),
        ("synthesize", None),
    ]
    assert events[0] == {
        "event": "tokens",
        "node": "plan",
        "hop": None,
        "input": 300,
        "output": 40,
        "total": {"input_tokens": 300, "output_tokens": 40, "calls": 1},
    }
    assert events[-1]["total"] == {"input_tokens": 1770, "output_tokens": 181, "calls": 10}


async def test_parallel_hops_add_to_one_running_total(engine: Engine, database_url: str) -> None:
    svc = services(engine, database_url, comparison_rules(build_corpus(engine)))
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        config: Any = {"configurable": {"thread_id": "tokens-parallel"}}
        context = GraspContext(corpus="films", **PAPER_VOTE)
        question = "Who was born first, Ivo Strand or Lena Marsh?"
        events = tokens_of(await stream(graph, {"question": question}, config, context))
        state = (await graph.aget_state(config)).values

    check_running_total(events, state["tokens"])
    assert sorted({e["hop"] for e in events if e["hop"]}) == [1, 2]
    assert events[-1]["total"] == {"input_tokens": 1420, "output_tokens": 148, "calls": 8}


async def test_a_second_turn_and_a_replan_count_from_the_turn_start(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, steering_rules(build_corpus(engine)))
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        config: Any = {"configurable": {"thread_id": "tokens-turns"}}
        plain = GraspContext(corpus="films", **PAPER_VOTE)
        await stream(graph, {"question": QUESTION}, config, plain)
        reviewed = GraspContext(corpus="films", review_plan=True, **PAPER_VOTE)
        events = tokens_of(await stream(graph, {"question": QUESTION}, config, reviewed))
        answer = {"type": "response", "args": GUIDANCE}
        events += tokens_of(await stream(graph, Command(resume=answer), config, reviewed))
        resume: Command[Any] = Command(resume={"type": "accept"})
        events += tokens_of(await stream(graph, resume, config, reviewed))
        state = (await graph.aget_state(config)).values

    # The second turn's events start from zero, and both of its plans are counted.
    assert events[0]["total"] == {"input_tokens": 300, "output_tokens": 40, "calls": 1}
    assert [e["node"] for e in events[:2]] == ["plan", "plan"]
    check_running_total(events, state["tokens"])
