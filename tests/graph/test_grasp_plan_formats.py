"""The graph runs a repaired linked plan hop after hop."""

import pytest
from sqlalchemy import Engine

from graphs.models.scripted_model import ScriptedChatModel
from tests.fixtures.films import (
    PLAN,
    build_corpus,
    chain_rules,
    comparison_rules,
    rule,
    run,
    services,
)

QUESTION = "Where was the director of Blue Harbor born?"


@pytest.mark.parametrize(
    "second_step",
    [
        {"needs": [1], "question": "Where was he born?"},  # listed, but no #1 in the text
        {"needs": [], "question": "Where was Tomas Reyd born?"},  # a guessed answer, no link
    ],
)
async def test_a_repaired_linked_plan_runs_its_hops_in_order(
    engine: Engine, database_url: str, second_step: dict[str, object]
) -> None:
    ids = build_corpus(engine)
    rules = chain_rules(ids)
    rules[0] = rule(
        PLAN,
        f"Question: {QUESTION}",
        reply={
            "plan": "Find the director, then the birthplace.",
            "sub_questions": [{"needs": [], "question": "Who directed Blue Harbor?"}, second_step],
        },
    )
    svc = services(engine, database_url, rules)
    state, trace = await run(svc, QUESTION, thread="linked-1")

    assert state["sub_questions"] == [
        {"index": 1, "text": "Who directed Blue Harbor?", "depends_on": []},
        {"index": 2, "text": "Where was #1 born?", "depends_on": [1]},
    ]
    # The second hop waits for the first and is asked with its answer filled in.
    assert trace["steps"] == [
        ["plan"],
        ["schedule"],
        ["sub_agent"],
        ["schedule"],
        ["sub_agent"],
        ["schedule"],
        ["synthesize"],
    ]
    assert state["answers"] == {1: "Tomas Reyd", 2: "Lisbon"}
    assert state["final_answer"] == "Lisbon"
    assert state["error"] is None
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    assert '"needs"' in model.prompts[0]  # the default is the linked format


async def test_an_unused_need_is_dropped_and_the_hops_run_side_by_side(
    engine: Engine, database_url: str
) -> None:
    # The small planner's habit: every step lists the one before it, comparisons included.
    ids = build_corpus(engine)
    rules = comparison_rules(ids)
    question = "Who was born first, Ivo Strand or Lena Marsh?"
    rules[0] = rule(
        PLAN,
        f"Question: {question}",
        reply={
            "plan": "Find both birth years and compare them.",
            "sub_questions": [
                {"needs": [], "question": "When was Ivo Strand born?"},
                {"needs": [1], "question": "When was Lena Marsh born?"},
            ],
        },
    )
    svc = services(engine, database_url, rules)
    state, trace = await run(svc, question, thread="drop-1", unwritten_needs="drop")

    # Appended, the second hop would have been asked "When was Lena Marsh born (1962)?".
    assert state["sub_questions"] == [
        {"index": 1, "text": "When was Ivo Strand born?", "depends_on": []},
        {"index": 2, "text": "When was Lena Marsh born?", "depends_on": []},
    ]
    assert trace["steps"][2] == ["sub_agent", "sub_agent"]
    assert state["answers"] == {1: "1962", 2: "1958"}
    assert state["final_answer"] == "Lena Marsh"
