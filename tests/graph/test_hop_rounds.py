"""`hop_rounds`: what a hop that searched again hands to the final answer."""

import pytest
from sqlalchemy import Engine, select

from graphs.agent.context import GraspContext
from graphs.agent.state import Evidence
from graphs.agent.subagent import kept_for_synthesis
from graphs.models.scripted_model import ScriptedChatModel
from store.engine import transaction
from store.models import Passage
from tests.fixtures.films import (
    EVALUATE,
    READER,
    REWRITE,
    SELECT,
    build_corpus,
    rule,
    run,
    services,
)

QUESTION = "Who directed Blue Harbor?"


def evidence(*ids: int) -> list[Evidence]:
    return [Evidence(id=pid, title=f"p{pid}", text="", score=1.0) for pid in ids]


def test_all_rounds_put_the_answering_rounds_best_first_then_each_earlier_round_in_turn() -> None:
    context = GraspContext(synthesis="reader", reader_passages=4, hop_rounds="all")
    earlier = [[1, 2, 3], [4, 5, 1]]  # oldest first, as the state keeps them
    assert kept_for_synthesis(context, evidence(7, 8, 9), earlier) == [7, 4, 1, 8]
    # Without earlier rounds, and with the default, only the answering round counts.
    assert kept_for_synthesis(context, evidence(7, 8, 9, 10, 11)) == [7, 8, 9, 10]
    last = GraspContext(synthesis="reader", reader_passages=4)
    assert last.hop_rounds == "last"
    assert kept_for_synthesis(last, evidence(7, 8, 9), earlier) == [7, 8, 9]
    # Nothing is handed on when the final answer reads no passages.
    assert kept_for_synthesis(GraspContext(hop_rounds="all"), evidence(7), earlier) == []


def test_hop_rounds_takes_only_its_two_values() -> None:
    with pytest.raises(ValueError, match="hop_rounds must be one of last | all"):
        GraspContext(hop_rounds="first")  # type: ignore[arg-type]


@pytest.mark.parametrize(("hop_rounds", "shown"), [("all", 2), ("last", 1)])
async def test_a_hop_that_searched_again_hands_on_its_first_rounds_passage_with_all(
    engine: Engine, database_url: str, hop_rounds: str, shown: int
) -> None:
    ids = build_corpus(engine)
    with transaction(engine) as session:
        by_title = {title: pid for title, pid in session.execute(select(Passage.title, Passage.id))}
    # Round 1 reads the right passage, yet the evaluator searches again and drifts to a painter;
    # it answers from its notes in round 2, where the passage is no longer shown.
    rules = [
        rule(
            REWRITE,
            f"Sub-question: {QUESTION}",
            reply={"search_statement": "Blue Harbor was directed by someone.", "keywords": []},
        ),
        rule(
            SELECT,
            "Looking for: Blue Harbor was directed by someone.",
            reply={"entity_ids": [ids["Blue Harbor"]]},
        ),
        rule(
            EVALUATE,
            "Blue Harbor: Blue Harbor is a 1998 drama film",
            reply={
                "observations": ["Blue Harbor was directed by Tomas Reyd."],
                "action": "QUERY_AGAIN",
                "search_statement": "Ivo Strand is a painter.",
            },
        ),
        rule(
            SELECT,
            "Looking for: Ivo Strand is a painter.",
            reply={"entity_ids": [ids["Ivo Strand"]]},
        ),
        rule(
            EVALUATE,
            "Ivo Strand: Ivo Strand is a painter.",
            reply={"observations": [], "action": "DONE", "answer": "Tomas Reyd"},
        ),
        rule(READER, f"Question: {QUESTION}", reply={"answer": "Tomas Reyd"}),
    ]
    svc = services(engine, database_url, rules)
    state, trace = await run(
        svc, QUESTION, planner="off", synthesis="reader", hop_rounds=hop_rounds
    )

    assert trace["agents"][1].count("evaluate") == 2
    expected = [by_title["Ivo Strand"], by_title["Blue Harbor"]][:shown]
    assert state["hop_passages"] == {1: expected}
    assert isinstance(svc.llm.model, ScriptedChatModel)
    prompt = next(p for p in svc.llm.model.prompts if READER in p)
    titles = [line.split("] ", 1)[1] for line in prompt.splitlines() if line.startswith("[")]
    assert titles == ["Ivo Strand", "Blue Harbor"][:shown]
    assert state["final_answer"] == "Tomas Reyd"
