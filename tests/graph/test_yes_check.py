"""The yes check in the graph: a reader's "yes" that a step's own passage does not bear out."""

from sqlalchemy import Engine

from tests.fixtures.films import PLAN, READER, SELECT, build_corpus, rule, run, services
from tests.graph.test_lean_agent import prompts

SETTINGS = {"first_search": "question", "synthesis": "reader", "final_hops": "read"}


def both_rules(
    ids: dict[str, int], question: str, steps: dict[str, str], planned: bool = True
) -> list:
    """One yes/no step per name (planned by the model or not), each finding its name's passage,
    and a "yes"."""
    plan = rule(
        PLAN,
        f"Question: {question}",
        reply={"plan": "Check each in turn.", "sub_questions": list(steps.values())},
    )
    return [
        *([plan] if planned else []),
        *(
            rule(SELECT, f"Looking for: {step}", reply={"entity_ids": [ids[name]]})
            for name, step in steps.items()
        ),
        rule(READER, f"Question: {question}", reply={"answer": "yes"}),
    ]


async def test_a_yes_the_second_steps_passage_does_not_bear_out_becomes_no(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    question = "Are Ivo Strand and Lena Marsh both painters?"
    steps = {"Ivo Strand": "Is Ivo Strand a painter?", "Lena Marsh": "Is Lena Marsh a painter?"}
    # "Are A and B both X?" is planned from its words: the planner is not asked.
    svc = services(engine, database_url, both_rules(ids, question, steps, planned=False))
    state, _ = await run(svc, question, thread="yes-check", **SETTINGS)

    assert not any(PLAN in p for p in prompts(svc))
    assert [sq["text"] for sq in state["sub_questions"]] == list(steps.values())
    assert "plan" not in state["tokens"]["by_node"]
    assert sum(READER in p for p in prompts(svc)) == 1  # the check itself asks nothing
    # "Lena Marsh is a sculptor.": her own passage never says "painter".
    assert state["final_answer"] == "no"
    assert state["justification"] == (
        'step 2\'s passage on Lena Marsh does not say "painter", so the answer is no'
    )
    # The answer cites each step's page; only Lena Marsh's, which settles it, is verified.
    cited = [(c["title"], c["text"], c["hop"], c["verified"]) for c in state["citations"]]
    assert cited == [
        ("Ivo Strand", "Ivo Strand is a painter.", 1, False),
        ("Lena Marsh", "Lena Marsh is a sculptor.", 2, True),
    ]
    (block,) = state["messages"][-1].content
    assert block["text"] == "no"
    assert [a["cited_text"] for a in block["annotations"]] == [c[1] for c in cited]


async def test_a_yes_every_step_bears_out_stands(engine: Engine, database_url: str) -> None:
    ids = build_corpus(engine)
    question = "Is Ivo Strand a painter and Tomas Reyd a film director?"
    steps = {
        "Ivo Strand": "Is Ivo Strand a painter?",
        "Tomas Reyd": "Is Tomas Reyd a film director?",
    }
    svc = services(engine, database_url, both_rules(ids, question, steps))
    state, _ = await run(svc, question, thread="yes-stands", **SETTINGS)

    assert state["final_answer"] == "yes"
    # Both pages bear the "yes" out, so both citations are verified.
    assert [(c["text"], c["verified"]) for c in state["citations"]] == [
        ("Ivo Strand is a painter.", True),
        ("Tomas Reyd is a film director.", True),
    ]
