"""`profile`: GRASP's defaults for the model it runs on (small = the offline llama.cpp model's)."""

from dataclasses import fields, replace

import pytest
from sqlalchemy import Engine

from graphs.agent.context import MODEL_PROFILES, GraspContext, chosen, setting_groups
from graphs.models.scripted_model import ScriptedChatModel
from graphs.peers.context import PeerContext
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
    small = given.resolved(local_model=True)
    assert small.profile == "small" and small.is_resolved
    assert (small.entity_selection, small.synthesis) == ("off", "reader")
    assert (small.bounded_replies, small.unwritten_needs) == (True, "drop")
    assert small.bridge_check
    assert MODEL_PROFILES["small"] == {
        "entity_selection": "off",
        "synthesis": "reader",
        "bounded_replies": True,
        "unwritten_needs": "drop",
        "bridge_check": True,
        "first_search": "question",
        "focus_chars": 200,
        "evaluator_prompt": "brief",
        "reader_focus_chars": 250,
        "final_hops": "read",
        "inner_hops": "bridge",
    }
    assert (small.first_search, small.focus_chars) == ("question", 200)
    assert (small.evaluator_prompt, small.reader_focus_chars) == ("brief", 250)
    # Nothing else moves, and the given context is not changed.
    paper = given.resolved(local_model=False)
    assert (paper.entity_selection, paper.synthesis) == ("llm", "findings")
    assert (paper.bounded_replies, paper.unwritten_needs, paper.bridge_check) == (
        False,
        "append",
        False,
    )
    assert (paper.first_search, paper.focus_chars) == ("rewrite", 0)
    assert (paper.evaluator_prompt, paper.reader_focus_chars) == ("full", 0)
    assert (small.final_hops, paper.final_hops) == ("read", "evaluate")
    assert (small.inner_hops, paper.inner_hops) == ("bridge", "evaluate")
    unset = {name: None for name in MODEL_PROFILES["paper"]}
    assert replace(small, profile="auto", **unset) == given
    assert replace(paper, profile="auto", **unset) == given
    assert given.entity_selection is None and not given.is_resolved
    # Resolving is done once: a resolved context resolves to itself.
    assert small.resolved(local_model=False) == small


def test_an_explicit_profile_wins_over_the_model_and_a_set_value_over_the_profile() -> None:
    paper = GraspContext(profile="paper").resolved(local_model=True)
    assert (paper.profile, paper.entity_selection, paper.synthesis) == ("paper", "llm", "findings")
    small = GraspContext(profile="small").resolved(local_model=False)
    assert (small.entity_selection, small.synthesis) == ("off", "reader")
    # A value the user set stays, even when it equals the paper's (no guessing from defaults).
    kept = GraspContext(entity_selection="llm", reader_passages=3).resolved(local_model=True)
    assert (kept.entity_selection, kept.reader_passages, kept.synthesis) == ("llm", 3, "reader")
    with pytest.raises(ValueError, match="profile must be one of auto | paper | small"):
        GraspContext(profile="tiny")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="bridge_check was read before"):
        chosen(GraspContext().bridge_check, "bridge_check")


def test_the_settings_are_grouped_and_the_peers_fields_inherited() -> None:
    groups = setting_groups()
    assert set(groups) == {"retrieval", "agent", "model", "conversation"}
    assert "k_props" in groups["retrieval"] and "history_turns" in groups["conversation"]
    assert "profile" in groups["model"] and "entity_selection" in groups["agent"]
    assert issubclass(GraspContext, PeerContext)
    assert sum(len(names) for names in groups.values()) == len(fields(GraspContext))


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
    # The reader reads the hops' passages alone, without the hop answers as notes.
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
