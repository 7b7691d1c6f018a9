"""`profile`: GRASP's defaults for the model it runs on (small = the offline llama.cpp model's)."""

from dataclasses import replace

import pytest
from sqlalchemy import Engine

from graphs.agent.context import SMALL_MODEL_DEFAULTS, GraspContext
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.services import Services
from nodes.llm.client import LlmClient
from tests.fixtures.films import (
    READER,
    SELECT,
    SYNTHESIZE,
    build_corpus,
    chain_rules,
    rule,
    run,
    services,
)

QUESTION = "Where was the director of Blue Harbor born?"


def test_auto_is_small_on_the_local_model_and_the_papers_elsewhere() -> None:
    given = GraspContext(corpus="films", k_props=20)
    small = given.settled(local_model=True)
    assert (small.entity_selection, small.synthesis) == ("off", "reader")
    assert (small.bounded_replies, small.unwritten_needs) == (True, "drop")
    assert small.bridge_check
    assert SMALL_MODEL_DEFAULTS == {
        "entity_selection": "off",
        "synthesis": "reader",
        "bounded_replies": True,
        "unwritten_needs": "drop",
        "bridge_check": True,
    }
    # Nothing else moves, and the given context is not changed.
    paper = replace(
        small,
        entity_selection="llm",
        synthesis="findings",
        bounded_replies=False,
        unwritten_needs="append",
        bridge_check=False,
    )
    assert paper == given
    assert (given.entity_selection, given.synthesis) == ("llm", "findings")
    assert given.settled(local_model=False) == given


def test_an_explicit_profile_wins_over_the_model() -> None:
    assert GraspContext(profile="paper").settled(local_model=True) == GraspContext(profile="paper")
    small = GraspContext(profile="small").settled(local_model=False)
    assert (small.entity_selection, small.synthesis) == ("off", "reader")
    # A value the user set away from the paper's stays.
    kept = GraspContext(reader_notes=True, reader_passages=3).settled(local_model=True)
    assert (kept.reader_notes, kept.reader_passages, kept.synthesis) == (True, 3, "reader")
    with pytest.raises(ValueError, match="profile must be one of auto | paper | small"):
        GraspContext(profile="tiny")  # type: ignore[arg-type]


def local_named(svc: Services) -> Services:
    """The same scripted model, named as the offline llama.cpp model is."""
    assert isinstance(svc.llm.model, ScriptedChatModel)
    llm = LlmClient(
        model=svc.llm.model, model_name="local:scripted", engine=svc.engine, use_cache=False
    )
    return replace(svc, llm=llm, extractor_llm=llm)


async def test_on_the_local_model_a_run_skips_entity_selection_and_reads_the_passages(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    reader = rule(READER, "Question: ", reply={"answer": "Lisbon"})
    svc = local_named(services(engine, database_url, [reader, *chain_rules(ids)]))
    state, _ = await run(svc, QUESTION, thread="profile-local")

    assert state["final_answer"] == "Lisbon"
    assert isinstance(svc.llm.model, ScriptedChatModel)
    prompts = svc.llm.model.prompts
    # Entity selection off: its node passes every candidate on without asking the model.
    assert not any(SELECT in p for p in prompts)
    assert not any(SYNTHESIZE in p for p in prompts)
    # The reader reads the hops' passages alone (reader_notes is off by default).
    read = [p for p in prompts if READER in p]
    assert len(read) == 1 and "Notes:" not in read[0] and "Passages:" in read[0]


async def test_profile_paper_keeps_the_papers_steps_on_the_local_model(
    engine: Engine, database_url: str
) -> None:
    svc = local_named(services(engine, database_url, chain_rules(build_corpus(engine))))
    state, _ = await run(svc, QUESTION, thread="profile-paper", profile="paper")

    assert state["final_answer"] == "Lisbon"
    assert isinstance(svc.llm.model, ScriptedChatModel)
    prompts = svc.llm.model.prompts
    assert any(SELECT in p for p in prompts) and any(SYNTHESIZE in p for p in prompts)
    assert not any(READER in p for p in prompts)
