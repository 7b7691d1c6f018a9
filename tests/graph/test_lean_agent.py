"""The lean agent's settings on the scripted films chain.

first_search=question, focus_chars, evaluator_prompt=brief, reader_focus_chars.
"""

import re
from typing import Any

from sqlalchemy import Engine

from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.services import Services
from nodes.agent.evaluate import BRIEF_SYSTEM, SYSTEM
from tests.fixtures.films import (
    EVALUATE,
    PLAN,
    READER,
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


async def test_evaluator_prompt_brief_gives_the_evaluator_the_short_instructions(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    svc = services(engine, database_url, chain_rules(ids))
    state, _ = await run(svc, QUESTION, thread="lean-brief", evaluator_prompt="brief")

    evaluations = [p for p in prompts(svc) if EVALUATE in p]
    assert len(evaluations) == 3
    assert all(p.startswith(BRIEF_SYSTEM) for p in evaluations)
    assert not any("Marie Duval" in p for p in evaluations)  # the full prompt's example
    assert state["final_answer"] == "Lisbon"
    # The full instructions (the paper profile's) on the same chain.
    full = services(engine, database_url, chain_rules(ids))
    await run(full, QUESTION, thread="lean-full")
    assert all(p.startswith(SYSTEM) for p in prompts(full) if EVALUATE in p)
    assert len(BRIEF_SYSTEM) <= len(SYSTEM) / 2


async def test_reader_focus_chars_shows_the_reader_the_sentences_nearest_the_hops(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    reader = rule(READER, "Question: ", reply={"answer": "Lisbon"})
    svc = services(engine, database_url, [reader, *chain_rules(ids)])
    state, _ = await run(
        svc, QUESTION, thread="lean-reader", synthesis="reader", reader_focus_chars=45
    )

    (read,) = [p for p in prompts(svc) if READER in p]
    # The reader looks for the question, the sub-questions and their answers: of each passage
    # it keeps the sentence naming the director and the one naming the birthplace.
    assert "Blue Harbor\n… Blue Harbor was directed by Tomas Reyd." in read
    assert "Tomas Reyd\n… Tomas Reyd was born in Lisbon in 1950." in read
    assert "starring Mara Quell" not in read and "is a film director" not in read
    assert state["final_answer"] == "Lisbon"
    # Whole passages at 0.
    whole = services(engine, database_url, [reader, *chain_rules(ids)])
    await run(whole, QUESTION, thread="lean-reader-whole", synthesis="reader")
    (read_whole,) = [p for p in prompts(whole) if READER in p]
    assert "Blue Harbor is a 1998 drama film starring Mara Quell." in read_whole
