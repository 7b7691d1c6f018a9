"""The peers under a token budget (max_tokens), with the scripted films corpus.

Scripted costs: think 325, answer 406, decompose 130, findings 94, selector 508.
"""

from typing import Any

import pytest
from sqlalchemy import Engine

from graphs.cli.ask_input import set_items
from graphs.cli.ask_report import BUDGET_LINE, summary_lines
from graphs.peers.registry import METHODS, method_context
from tests.fixtures.films import services
from tests.fixtures.peers import (
    ADDER,
    ANSWER,
    DECOMPOSE,
    FINDINGS,
    SELECTOR,
    THINK,
    call_kinds,
    expected_tally,
    films_with_graph,
    prompts,
    rule,
    run_peer,
)

QUESTION = "Where was the director of Blue Harbor born?"
FIRST = "Blue Harbor was directed by Tomas Reyd."
SECOND = "Tomas Reyd was born in Lisbon."
SUBS = ["Who directed Blue Harbor?", "Where was #1 born?"]
LOOPS = [
    ("ircot", {"passages_per_step": 2}),
    (
        "sa-rag-cot",
        {"passages_per_step": 2, "activation_threshold": 0.1, "passage_threshold": 0.0},
    ),
]


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_takes_a_budget(method: str) -> None:
    settings = set_items(["max_tokens=1200"], METHODS[method].context)
    assert settings == {"max_tokens": 1200}
    assert method_context(method, "films", **settings).max_tokens == 1200
    assert method_context(method, "films").max_tokens == 0  # off by default
    with pytest.raises(ValueError, match="max_tokens"):
        method_context(method, "films", max_tokens=-1)


def loop_rules() -> list[Any]:
    return [
        rule(THINK, "Reasoning so far: (none yet)", reply={"thought": FIRST, "done": False}),
        rule(
            THINK,
            f"Reasoning so far: {FIRST}",
            reply={"thought": SECOND, "done": True, "answer": "Lisbon"},
        ),
        rule(ANSWER, f"Notes:\n- {FIRST}\n\nPassages:", reply={"answer": "Tomas Reyd"}),
        rule(ANSWER, f"Notes:\n- {FIRST}\n- {SECOND}", reply={"answer": "Lisbon"}),
    ]


@pytest.mark.parametrize(("method", "settings"), LOOPS)
async def test_a_cot_loop_answers_once_the_budget_is_spent(
    engine: Engine, database_url: str, method: str, settings: dict[str, Any]
) -> None:
    films_with_graph(engine)
    svc = services(engine, database_url, loop_rules())
    # The first sentence costs 325 tokens: at 325 the loop may not think again.
    state, nodes = await run_peer(method, svc, QUESTION, max_tokens=325, **settings)

    assert nodes == ["start", "retrieve", "think", "answer"]
    assert call_kinds(svc) == [THINK, ANSWER]
    assert f"Notes:\n- {FIRST}\n\nPassages:" in prompts(svc)[1]
    assert (state["final_answer"], state["budget_stopped"]) == ("Tomas Reyd", True)
    tokens = state["tokens"]
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]) == expected_tally(
        [THINK, ANSWER]
    )


async def test_a_cot_loop_under_its_budget_runs_as_without_one(
    engine: Engine, database_url: str
) -> None:
    films_with_graph(engine)
    svc = services(engine, database_url, loop_rules())
    state, nodes = await run_peer("ircot", svc, QUESTION, max_tokens=326, passages_per_step=2)
    assert nodes == ["start", "retrieve", "think", "retrieve", "think", "answer"]
    assert call_kinds(svc) == [THINK, THINK, ANSWER]
    # The loop ended on its own (the answer was settled), not by the budget.
    assert (state["final_answer"], state["budget_stopped"]) == ("Lisbon", False)


def self_ask_rules() -> list[Any]:
    return [
        rule(DECOMPOSE, f"Question: {QUESTION}", reply={"sub_questions": SUBS}),
        rule(ANSWER, "Question: Who directed Blue Harbor?", reply={"answer": "Tomas Reyd"}),
        rule(
            FINDINGS,
            "1. Who directed Blue Harbor? → Tomas Reyd\n\n",
            f"Question: {QUESTION}",
            reply={"answer": "Tomas Reyd"},
        ),
        rule(FINDINGS, f"Question: {QUESTION}", reply={"answer": "unknown"}),
    ]


async def test_self_ask_stops_asking_once_the_budget_is_spent(
    engine: Engine, database_url: str
) -> None:
    films_with_graph(engine)
    svc = services(engine, database_url, self_ask_rules())
    # decompose 130 + the first sub-answer 406 = 536: the second sub-question is not asked.
    state, nodes = await run_peer("self-ask", svc, QUESTION, k=1, max_tokens=536)

    assert nodes == ["start", "decompose", "ask_next", "answer"]
    assert call_kinds(svc) == [DECOMPOSE, ANSWER, FINDINGS]
    assert state["sub_answers"] == ["Tomas Reyd"]
    assert (state["final_answer"], state["budget_stopped"]) == ("Tomas Reyd", True)
    assert state["tokens"]["calls"] == 3


async def test_self_ask_past_its_budget_after_decomposing_answers_at_once(
    engine: Engine, database_url: str
) -> None:
    films_with_graph(engine)
    svc = services(engine, database_url, self_ask_rules()[:1] + self_ask_rules()[3:])
    state, nodes = await run_peer("self-ask", svc, QUESTION, k=1, max_tokens=100)
    assert nodes == ["start", "decompose", "answer"]
    assert call_kinds(svc) == [DECOMPOSE, FINDINGS]
    assert (state["final_answer"], state["budget_stopped"]) == ("unknown", True)


async def test_prism_answers_after_the_selector_once_the_budget_is_spent(
    engine: Engine, database_url: str
) -> None:
    films_with_graph(engine)
    rules = [
        rule(DECOMPOSE, f"Question: {QUESTION}", reply={"sub_questions": SUBS}),
        rule(SELECTOR, "Kept so far: none yet\n", reply={"keep": [1]}),
        rule(ANSWER, "Blue Harbor", reply={"answer": "Tomas Reyd"}),
    ]
    svc = services(engine, database_url, rules)
    # analyze 130 + selector 508 = 638: the Adder is not asked.
    state, nodes = await run_peer("prism", svc, QUESTION, max_tokens=638)
    assert nodes == ["start", "analyze", "gather", "select", "answer"]
    assert call_kinds(svc) == [DECOMPOSE, SELECTOR, ANSWER]
    assert ADDER not in "".join(prompts(svc))
    assert (state["final_answer"], state["budget_stopped"]) == ("Tomas Reyd", True)


async def test_a_single_call_reader_answers_whatever_the_budget(
    engine: Engine, database_url: str
) -> None:
    films_with_graph(engine)
    svc = services(engine, database_url, [rule(ANSWER, reply={"answer": "Lisbon"})])
    state, nodes = await run_peer("dense", svc, QUESTION, max_tokens=1)
    assert nodes == ["start", "retrieve", "answer"]
    assert call_kinds(svc) == [ANSWER]
    # Its one call is the answer, which a budget always allows: nothing was stopped.
    assert (state["final_answer"], state["budget_stopped"]) == ("Lisbon", False)


def test_grasp_ask_says_when_the_budget_ended_the_search() -> None:
    values = {"final_answer": "Lisbon", "tokens": {}, "budget_stopped": True}
    assert BUDGET_LINE in summary_lines(values, None)
    assert BUDGET_LINE not in summary_lines({**values, "budget_stopped": False}, None)
