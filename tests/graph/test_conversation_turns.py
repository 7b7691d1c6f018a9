"""A thread is a conversation: later turns see earlier questions and answers, each turn its own."""

from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine

from graphs.agent.context import GraspContext
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.checkpoints import last_run, read_steps
from nodes.agent.plan import history_block
from tests.fixtures.films import PAPER_VOTE, PLAN, build_corpus, services
from tests.graph.conversation_script import (
    FIRST,
    FOLLOW_UP,
    HISTORY_LINE,
    conversation_graph,
    conversation_rules,
)

#: Each turn: plan, rewrite, select, evaluate, synthesize (one search round).
TURN_TOKENS = {"input_tokens": 950, "output_tokens": 100, "calls": 5}


async def ask(graph: GraspGraph, thread: str, question: str | None, **context: Any) -> Any:
    config: Any = {"configurable": {"thread_id": thread}}
    return await graph.ainvoke(
        {"question": question} if question is not None else None,
        config,
        context=GraspContext(corpus="films", **{**PAPER_VOTE, **context}),
    )


def plan_prompts(model: ScriptedChatModel) -> list[str]:
    return [p for p in model.prompts if p.startswith(PLAN)]


async def test_a_follow_up_is_planned_against_the_earlier_turn(
    engine: Engine, database_url: str
) -> None:
    graph, model = conversation_graph(engine, database_url)

    first = await ask(graph, "conv-1", FIRST)
    state = await ask(graph, "conv-1", FOLLOW_UP)

    assert first["final_answer"] == "Tomas Reyd"
    assert state["final_answer"] == "Lisbon"
    turn_1_prompt, turn_2_prompt = plan_prompts(model)
    assert "Earlier in this conversation" not in turn_1_prompt  # turn 1's prompt is unchanged
    assert turn_1_prompt.endswith(f"Question: {FIRST}")
    assert f"{HISTORY_LINE}\n\nQuestion: {FOLLOW_UP}" in turn_2_prompt
    # Only questions and final answers cross turns: no evidence, no justification.
    assert "1998 drama film" not in turn_2_prompt and "He directed it" not in turn_2_prompt

    # The turn's own fields were reset; the conversation fields span both turns.
    assert state["turn"] == 2
    assert state["sub_questions"] == [
        {"index": 1, "text": "Where was Tomas Reyd born?", "depends_on": []}
    ]
    assert state["answers"] == {1: "Lisbon"}
    tokens = state["tokens"]
    assert {k: tokens[k] for k in TURN_TOKENS} == TURN_TOKENS
    assert sorted(tokens["by_node"]) == [
        "evaluate",
        "plan",
        "rewrite",
        "select_entities",
        "synthesize",
    ]
    assert state["turns"] == [
        {"question": FIRST, "answer": "Tomas Reyd", "tokens": TURN_TOKENS},
        {"question": FOLLOW_UP, "answer": "Lisbon", "tokens": TURN_TOKENS},
    ]
    assert state["conversation_tokens"] == {"input_tokens": 1900, "output_tokens": 200, "calls": 10}

    # Each turn has its own checkpoints, from its own input checkpoint on.
    steps = await read_steps(graph, "conv-1")
    starts = [s for s in steps if (s.metadata or {}).get("source") == "input"]
    assert len(starts) == 2
    latest = last_run(steps)
    assert latest[1].values["question"] == FOLLOW_UP
    assert all(s.values.get("turn") in (None, 1, 2) for s in latest)
    assert (
        latest[-1].values["turn"] == 2 and steps[len(steps) - len(latest) - 1].values["turn"] == 1
    )


async def test_the_planner_sees_only_the_last_turns_cut_short(
    engine: Engine, database_url: str
) -> None:
    graph, model = conversation_graph(engine, database_url)
    config: Any = {"configurable": {"thread_id": "conv-2"}}
    earlier = [
        {
            "question": f"Old question {n} " + "x" * 50,
            "answer": f"answer {n}",
            "tokens": TURN_TOKENS,
        }
        for n in range(1, 5)
    ]
    await graph.aupdate_state(config, {"turns": earlier}, as_node="synthesize")

    state = await ask(graph, "conv-2", FIRST, history_turns=2, history_chars=16)

    prompt = plan_prompts(model)[-1]
    assert "Q: Old question 3 …\nA: answer 3\nQ: Old question 4 …\nA: answer 4\n\n" in prompt
    assert "Old question 2" not in prompt
    assert state["turn"] == 5 and len(state["turns"]) == 5
    assert state["conversation_tokens"]["calls"] == 5 * 4 + 5


async def test_no_history_when_history_turns_is_zero(engine: Engine, database_url: str) -> None:
    graph, model = conversation_graph(engine, database_url)
    await ask(graph, "conv-3", FIRST)
    await ask(graph, "conv-3", FIRST, history_turns=0)

    assert all("Earlier in this conversation" not in p for p in plan_prompts(model))


async def test_an_interrupted_turn_resumes_and_is_recorded_once(
    engine: Engine, database_url: str
) -> None:
    rules = conversation_rules(build_corpus(engine))
    failing = rules[4].model_copy(update={"error": "the model went away", "times": 1})
    svc = services(engine, database_url, [failing, *rules])
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    graph = build_grasp_graph(svc, InMemorySaver())
    await ask(graph, "conv-4", FIRST)

    with pytest.raises(Exception, match="the model went away"):
        await ask(graph, "conv-4", FOLLOW_UP)
    stopped = await graph.aget_state({"configurable": {"thread_id": "conv-4"}})
    assert stopped.next == ("synthesize",)
    assert len(stopped.values["turns"]) == 1

    state = await ask(graph, "conv-4", None)  # continue the interrupted turn

    assert state["final_answer"] == "Lisbon"
    assert [t["question"] for t in state["turns"]] == [FIRST, FOLLOW_UP]
    assert len(plan_prompts(model)) == 2  # the follow-up was planned once


def test_history_block_is_empty_without_turns_and_cuts_long_text() -> None:
    assert history_block([], 10) == ""
    block = history_block([("a  very\nlong question", "short")], 8)
    assert "Q: a very …\nA: short\n\n" in block
