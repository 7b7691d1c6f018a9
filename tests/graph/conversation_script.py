"""A scripted two-turn conversation over films: turn 2's "he" is only clear from turn 1."""

from langgraph.checkpoint.memory import InMemorySaver
from sqlalchemy import Engine

from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from tests.fixtures.films import (
    PLAN,
    REWRITE,
    SYNTHESIZE,
    build_corpus,
    chain_rules,
    rule,
    services,
)

FIRST = "Who directed Blue Harbor?"
FOLLOW_UP = "Where was he born?"
HISTORY_LINE = f"Q: {FIRST}\nA: Tomas Reyd"


def conversation_rules(ids: dict[str, int]) -> list[ScriptedReply]:
    """Turn 1 asks who directed Blue Harbor; turn 2's "he" is only clear from turn 1."""
    return [
        rule(
            PLAN,
            "Earlier in this conversation",
            HISTORY_LINE,
            f"Question: {FOLLOW_UP}",
            reply={"plan": "He is Tomas Reyd.", "sub_questions": ["Where was Tomas Reyd born?"]},
        ),
        rule(
            PLAN,
            f"Question: {FIRST}",
            reply={"plan": "Look up the director.", "sub_questions": [FIRST]},
        ),
        rule(
            REWRITE,
            "Sub-question: Where was Tomas Reyd born?",
            reply={
                "search_statement": "Tomas Reyd was born in a city.",
                "keywords": ["Tomas Reyd", "born"],
            },
        ),
        rule(
            SYNTHESIZE,
            f"Question: {FIRST}",
            f"1. {FIRST} → Tomas Reyd",
            reply={"answer": "Tomas Reyd", "justification": "He directed it."},
        ),
        rule(
            SYNTHESIZE,
            f"Question: {FOLLOW_UP}",
            "1. Where was Tomas Reyd born? → Lisbon",
            reply={"answer": "Lisbon", "justification": "Tomas Reyd was born in Lisbon."},
        ),
        *chain_rules(ids),
    ]


def conversation_graph(engine: Engine, database_url: str) -> tuple[GraspGraph, ScriptedChatModel]:
    """GRASP over the films corpus with this conversation's scripted model, in-memory checkpoints."""
    svc = services(engine, database_url, conversation_rules(build_corpus(engine)))
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    return build_grasp_graph(svc, InMemorySaver()), model
