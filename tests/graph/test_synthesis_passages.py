"""`synthesis_passages`: the final answer also reads the passages the hop answers came from."""

from sqlalchemy import Engine, select

from graphs.models.scripted_model import ScriptedChatModel
from store.engine import transaction
from store.models import Passage
from tests.fixtures.films import SYNTHESIZE, build_corpus, chain_rules, rule, run, services

QUESTION = "Where was the director of Blue Harbor born?"


def synthesis_prompt(model: ScriptedChatModel) -> str:
    return next(p for p in model.prompts if SYNTHESIZE in p)


async def test_the_final_answer_reads_each_hops_passages_in_hop_order(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    reading = rule(
        SYNTHESIZE,
        "Where a finding and its passage disagree, trust the passage.",
        "Passages:\n[1] Blue Harbor: Blue Harbor is a 1998 drama film",
        "\n[2] Tomas Reyd: Tomas Reyd is a film director. Tomas Reyd was born in Lisbon",
        reply={"answer": "Lisbon", "justification": "Its passage says so."},
    )
    svc = services(engine, database_url, [reading, *chain_rules(ids)])
    state, _ = await run(svc, QUESTION, thread="reads-1", synthesis_passages=1)

    with transaction(engine) as session:
        by_title = {title: pid for title, pid in session.execute(select(Passage.title, Passage.id))}
    assert state["hop_passages"] == {1: [by_title["Blue Harbor"]], 2: [by_title["Tomas Reyd"]]}
    assert (state["final_answer"], state["justification"]) == ("Lisbon", "Its passage says so.")
    assert isinstance(svc.llm.model, ScriptedChatModel)
    prompt = synthesis_prompt(svc.llm.model)
    # The hop answers still guide it, and only the passages the answers were read from are shown.
    assert "2. Where was Tomas Reyd born? → Lisbon" in prompt
    assert prompt.count("\n[") == 2


async def test_by_default_the_final_answer_reads_only_the_hop_answers(
    engine: Engine, database_url: str
) -> None:
    svc = services(engine, database_url, chain_rules(build_corpus(engine)))
    state, _ = await run(svc, QUESTION, thread="reads-0")

    assert state.get("hop_passages", {}) == {}
    assert isinstance(svc.llm.model, ScriptedChatModel)
    prompt = synthesis_prompt(svc.llm.model)
    assert "Passages:" not in prompt and "trust the passage" not in prompt
    assert state["final_answer"] == "Lisbon"
