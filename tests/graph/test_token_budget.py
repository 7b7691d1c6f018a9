"""GRASP under a token budget (max_tokens), with the scripted films chain.

The chain's calls cost: plan 340, then per hop rewrite 135, select 158, evaluate 225, and the
synthesis 192; hop 1 ends at 858 tokens and hop 2's rewrite takes the turn to 993.
"""

from typing import Any

from sqlalchemy import Engine

from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.services import Services
from tests.fixtures.films import (
    EVALUATE,
    PLAN,
    REWRITE,
    SELECT,
    SUB_AGENT_ROUND,
    SYNTHESIZE,
    build_corpus,
    chain_rules,
    rule,
    run,
    services,
)

QUESTION = "Where was the director of Blue Harbor born?"
KINDS = (PLAN, REWRITE, SELECT, EVALUATE, SYNTHESIZE)
LAST_ROUND = "This is the last search round"


def calls(svc: Services) -> list[str]:
    """Which step each call was, by its prompt's opening, in call order."""
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    return [next(kind for kind in KINDS if kind in prompt) for prompt in model.prompts]


def prompts(svc: Services) -> list[str]:
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    return model.prompts


def total(state: dict[str, Any]) -> tuple[int, int, int]:
    tokens = state["tokens"]
    return tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]


async def test_past_the_budget_a_hop_not_started_is_skipped(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    rules = [
        *chain_rules(ids)[:4],
        rule(
            SYNTHESIZE,
            "1. Who directed Blue Harbor? → Tomas Reyd\n2. Where was Tomas Reyd born? → unknown",
            reply={"answer": "unknown", "justification": "The birthplace was not searched."},
        ),
    ]
    svc = services(engine, database_url, rules)
    # Hop 1 ends at 858 ≥ 800: hop 2 is never sent, the synthesis answers at once.
    state, trace = await run(svc, QUESTION, thread="budget-skip", max_tokens=800)

    assert calls(svc) == [PLAN, REWRITE, SELECT, EVALUATE, SYNTHESIZE]
    assert trace["steps"] == [["plan"], ["schedule"], ["sub_agent"], ["schedule"], ["synthesize"]]
    assert trace["agents"] == {1: ["rewrite", *SUB_AGENT_ROUND]}
    assert state["answers"] == {1: "Tomas Reyd"}
    assert state["final_answer"] == "unknown"
    assert state["budget_stopped"] is True
    assert total(state) == (300 + 120 + 150 + 200 + 180, 40 + 15 + 8 + 25 + 12, 5)


async def test_past_the_budget_an_open_hop_answers_from_what_it_found(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    svc = services(engine, database_url, chain_rules(ids))
    # Hop 2 starts at 858 < 900; its rewrite takes the turn to 993 ≥ 900, so no selection call
    # (every candidate is traversed) and its first evaluation is its last round.
    state, trace = await run(svc, QUESTION, thread="budget-cut", max_tokens=900)

    kinds = [PLAN, REWRITE, SELECT, EVALUATE, REWRITE, EVALUATE, SYNTHESIZE]
    assert calls(svc) == kinds
    assert trace["agents"] == {1: ["rewrite", *SUB_AGENT_ROUND], 2: ["rewrite", *SUB_AGENT_ROUND]}
    evaluations = [p for p in prompts(svc) if EVALUATE in p]
    assert [LAST_ROUND in p for p in evaluations] == [False, True]
    assert "Tomas Reyd was born in Lisbon in 1950." in evaluations[1]
    assert state["answers"] == {1: "Tomas Reyd", 2: "Lisbon"}
    assert state["final_answer"] == "Lisbon"
    assert state["budget_stopped"] is True
    assert total(state)[2] == len(kinds)
    assert [(r["node"], r["agent"]) for r in state["tokens"]["records"]][4:6] == [
        ("rewrite", "sq2"),
        ("evaluate", "sq2"),
    ]


async def test_a_budget_never_reached_changes_nothing(engine: Engine, database_url: str) -> None:
    ids = build_corpus(engine)
    runs = []
    for thread, budget in (("budget-off", 0), ("budget-wide", 1951)):
        svc = services(engine, database_url, chain_rules(ids))
        state, trace = await run(svc, QUESTION, thread=thread, max_tokens=budget)
        runs.append((calls(svc), trace, total(state), state["final_answer"]))
        assert state["budget_stopped"] is False
    assert runs[0] == runs[1]
    assert runs[0][2] == (1770, 181, 10) and runs[0][3] == "Lisbon"
