"""`synthesis_passages`: the final answer also reads the passages the hop answers came from."""

from typing import Any

import pytest
from sqlalchemy import Engine, select

from graphs.agent.context import GraspContext
from graphs.agent.graph import hop_passage_texts
from graphs.models.scripted_model import ScriptedChatModel
from nodes.agent.plan_dag import final_hops
from nodes.agent.synthesize import final_focused_order, reading_order
from store.engine import transaction
from store.models import Passage
from tests.fixtures.films import (
    READER,
    SYNTHESIZE,
    build_corpus,
    chain_rules,
    rule,
    run,
    services,
)

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


async def test_the_reader_reads_the_hops_best_passages_in_turn_with_the_answers_as_notes(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    with transaction(engine) as session:
        titles = {pid: title for pid, title in session.execute(select(Passage.id, Passage.title))}
    reader = rule(
        READER,
        "Notes:\n- Who directed Blue Harbor? → Tomas Reyd\n- Where was Tomas Reyd born? → Lisbon",
        "Passages:\n[1] Blue Harbor\nBlue Harbor is a 1998 drama film",
        "\n\n[2] Tomas Reyd\nTomas Reyd is a film director.",
        "Question: Where was the director of Blue Harbor born?",
        # The aside the reader copies from its passage is not part of the final answer.
        reply={"answer": "Lisbon (Portugal)"},
    )
    # The paper's synthesis must not be asked: only the reader's rule may answer.
    rules = [r for r in chain_rules(ids) if SYNTHESIZE not in r.when[0].replace("\\", "")]
    svc = services(engine, database_url, [reader, *rules])
    state, _ = await run(
        svc, QUESTION, thread="reader-1", synthesis="reader", reader_passages=3, reader_notes=True
    )

    hops = state["hop_passages"]
    assert sorted(hops) == [1, 2] and all(1 <= len(hops[k]) <= 3 for k in hops)
    assert [titles[hops[1][0]], titles[hops[2][0]]] == ["Blue Harbor", "Tomas Reyd"]
    assert state["final_answer"] == "Lisbon"
    assert isinstance(svc.llm.model, ScriptedChatModel)
    prompt = next(p for p in svc.llm.model.prompts if READER in p)
    assert not any(SYNTHESIZE in p for p in svc.llm.model.prompts)
    shown = [line.split("] ", 1)[1] for line in prompt.splitlines() if line.startswith("[")]
    # In turn from each hop, each passage once (hop 2's second is hop 1's best here).
    assert [titles[pid] for pid in reading_order(hops, 3)] == shown == ["Blue Harbor", "Tomas Reyd"]
    assert state["justification"].startswith("read from 2 passages")


def test_reading_order_takes_each_hops_passages_in_turn_each_once() -> None:
    assert reading_order({2: [7, 8], 1: [5, 7, 9]}, 4) == [5, 7, 8, 9]
    assert reading_order({1: [5, 6, 7], 2: [8]}, 3) == [5, 8, 6]
    assert reading_order({1: [5]}, 5) == [5]
    assert reading_order({}, 5) == []


def test_final_focus_takes_each_bridges_best_then_fills_from_the_final_hops() -> None:
    # A chain 1 → 2 → 3: hop 3 is final, hops 1 and 2 bridges.
    chain = {1: [5, 6], 2: [7, 8], 3: [9, 10, 11, 12]}
    assert final_focused_order(chain, {3}, 5) == [5, 7, 9, 10, 11]
    # Two final hops (a comparison's two sides after one bridge) share the rest in turn.
    assert final_focused_order({1: [5, 6], 2: [7, 8, 9], 3: [10, 11]}, {2, 3}, 5) == [
        5,
        7,
        10,
        8,
        11,
    ]
    # A passage two hops share is taken once; short final lists are filled from every hop.
    assert final_focused_order({1: [5, 6, 4], 2: [5]}, {2}, 3) == [5, 6, 4]
    # More bridges than room: the first bridges' best, in hop order.
    assert final_focused_order({1: [5], 2: [6], 3: [7]}, {3}, 2) == [5, 6]


@pytest.mark.parametrize(("focus", "third"), [("final", "Lena Marsh"), ("even", "Ivo Strand")])
async def test_the_reader_focus_decides_which_hops_fill_the_reader_passages(
    engine: Engine, database_url: str, focus: str, third: str
) -> None:
    build_corpus(engine)
    with transaction(engine) as session:
        by_title = {title: pid for title, pid in session.execute(select(Passage.title, Passage.id))}
    hop_1 = [by_title["Blue Harbor"], by_title["Ivo Strand"]]
    hop_2 = [by_title["Tomas Reyd"], by_title["Lena Marsh"], by_title["Ivo Strand"]]
    state: Any = {
        "sub_questions": [
            {"index": 1, "text": "Who directed Blue Harbor?", "depends_on": []},
            {"index": 2, "text": "Where was #1 born?", "depends_on": [1]},
        ],
        "hop_passages": {1: hop_1, 2: hop_2},
    }
    assert final_hops(state["sub_questions"]) == {2}
    context = GraspContext(synthesis="reader", reader_passages=3, reader_focus=focus)  # type: ignore[arg-type]
    svc = services(engine, database_url, [])

    shown = await hop_passage_texts(svc, state, context)

    assert [p.title for p in shown] == ["Blue Harbor", "Tomas Reyd", third]


def test_the_reader_needs_passage_evidence() -> None:
    with pytest.raises(ValueError, match="synthesis=reader"):
        GraspContext(synthesis="reader", evidence="propositions")
    with pytest.raises(ValueError, match="reader_passages"):
        GraspContext(reader_passages=0)


async def test_by_default_the_reader_reads_the_passages_alone(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    reader = rule(
        READER,
        "Passages:\n[1] Blue Harbor\n",
        "Question: Where was the director of Blue Harbor born?",
        reply={"answer": "Lisbon"},
    )
    rules = [r for r in chain_rules(ids) if SYNTHESIZE not in r.when[0].replace("\\", "")]
    svc = services(engine, database_url, [reader, *rules])
    state, _ = await run(svc, QUESTION, thread="reader-2", synthesis="reader")

    assert state["final_answer"] == "Lisbon"
    assert state["justification"] == "read from 2 passages of the hops"
    assert isinstance(svc.llm.model, ScriptedChatModel)
    prompt = next(p for p in svc.llm.model.prompts if READER in p)
    assert "Notes:" not in prompt and "→" not in prompt


@pytest.mark.parametrize(("bridge_check", "expected"), [(False, "Tomas Reyd"), (True, "Lisbon")])
async def test_the_bridge_check_replaces_a_bridge_answer_with_the_final_hops(
    engine: Engine, database_url: str, bridge_check: bool, expected: str
) -> None:
    ids = build_corpus(engine)
    # The reader names the director, the bridge of "director of Blue Harbor" → "born where".
    reader = rule(READER, "Question: Where was the director", reply={"answer": "Tomas Reyd"})
    rules = [r for r in chain_rules(ids) if SYNTHESIZE not in r.when[0].replace("\\", "")]
    svc = services(engine, database_url, [reader, *rules])
    state, _ = await run(
        svc,
        QUESTION,
        thread=f"bridge-{bridge_check}",
        synthesis="reader",
        bridge_check=bridge_check,
    )

    assert state["answers"] == {1: "Tomas Reyd", 2: "Lisbon"}
    assert state["final_answer"] == expected
    if bridge_check:
        assert state["justification"].startswith("the reader answered step 1's answer")


async def test_chain_answer_gives_the_last_hops_answer_without_a_final_call(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    # No reader rule and no synthesis rule: a final call would find no scripted reply.
    rules = [r for r in chain_rules(ids) if SYNTHESIZE not in r.when[0].replace("\\", "")]
    svc = services(engine, database_url, rules)
    state, _ = await run(
        svc, QUESTION, thread="chain-answer", synthesis="reader", chain_answer=True
    )

    assert state["answers"] == {1: "Tomas Reyd", 2: "Lisbon"}
    assert state["final_answer"] == "Lisbon"
    assert (
        state["justification"] == "step 2 ends the chain of steps; its answer is given as it stands"
    )
    assert isinstance(svc.llm.model, ScriptedChatModel)
    assert not any(READER in p or SYNTHESIZE in p for p in svc.llm.model.prompts)
    assert "synthesize" not in state["tokens"]["by_node"]
