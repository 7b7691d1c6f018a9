"""The lean agent's settings on the scripted films chain: first_search=question, focus_chars."""

import re
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


def prompts(svc: Services) -> list[str]:
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    return model.prompts


def calls(svc: Services) -> list[str]:
    return [next(kind for kind in KINDS if kind in prompt) for prompt in prompts(svc)]


def question_rules(ids: dict[str, int]) -> list[Any]:
    """The chain's plan, evaluations and synthesis; each hop searched by its sub-question."""
    searches = {re.escape(REWRITE), re.escape(SELECT)}  # a rule's first pattern names its node
    kept = [r for r in chain_rules(ids) if r.when[0] not in searches]
    return [
        rule(
            SELECT,
            "Looking for: Who directed Blue Harbor?",
            reply={"entity_ids": [ids["Blue Harbor"]]},
        ),
        rule(SELECT, "Looking for: Where was Tomas Reyd born?", reply={"entity_ids": []}),
        rule(
            SELECT,
            "Looking for: Tomas Reyd was born in a city.",
            reply={"entity_ids": [ids["Tomas Reyd"]]},
        ),
        *kept,
    ]


async def test_first_search_question_searches_the_sub_question_without_a_call(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    svc = services(engine, database_url, question_rules(ids))
    state, trace = await run(svc, QUESTION, thread="lean-question", first_search="question")

    assert calls(svc) == [PLAN, SELECT, EVALUATE, SELECT, EVALUATE, SELECT, EVALUATE, SYNTHESIZE]
    # The node still runs (it sets the round's query) but asks nothing.
    assert trace["agents"] == {
        1: ["rewrite", *SUB_AGENT_ROUND],
        2: ["rewrite", *SUB_AGENT_ROUND, *SUB_AGENT_ROUND],
    }
    # Hop 2's first query is its sub-question with hop 1's answer filled in.
    assert "Looking for: Where was Tomas Reyd born?" in prompts(svc)[3]
    # A QUERY_AGAIN round still searches the evaluator's statement.
    assert "Looking for: Tomas Reyd was born in a city." in prompts(svc)[5]
    assert state["final_answer"] == "Lisbon"
    assert [r["node"] for r in state["tokens"]["records"]].count("rewrite") == 0
    assert state["tokens"]["calls"] == 8


async def test_focus_chars_shows_the_evaluator_the_sentences_nearest_the_search(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    focused_hop_1 = rule(
        EVALUATE,
        "Sub-question: Who directed Blue Harbor?",
        "Blue Harbor: … Blue Harbor was directed by Tomas Reyd.",
        reply={"observations": [], "action": "DONE", "answer": "Tomas Reyd"},
    )
    svc = services(engine, database_url, [focused_hop_1, *chain_rules(ids)])
    state, _ = await run(svc, QUESTION, thread="lean-focus", focus_chars=50)

    evaluations = [p for p in prompts(svc) if EVALUATE in p]
    # Hop 1 searched "Blue Harbor was directed by a director.": the directing sentence stays,
    # the sentence about the star (fewer shared words) is cut and marked.
    assert "Blue Harbor: … Blue Harbor was directed by Tomas Reyd." in evaluations[0]
    assert "starring Mara Quell" not in evaluations[0]
    # Whole passages again at 0 (the default), on the same chain.
    whole = services(engine, database_url, chain_rules(ids))
    await run(whole, QUESTION, thread="lean-whole")
    first = next(p for p in prompts(whole) if EVALUATE in p)
    assert "Blue Harbor: Blue Harbor is a 1998 drama film starring Mara Quell." in first
    assert state["final_answer"] == "Lisbon"
