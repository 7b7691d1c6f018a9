"""PRISM end to end with a scripted model: the Selector ↔ Adder rounds, their cap and the kept set."""

import re
from typing import Any

from sqlalchemy import Engine

from graphs.peers.prism import PrismContext, PrismState, kept_numbers, not_kept, with_kept
from graphs.peers.self_ask import SelfAskContext
from nodes.peers.answer import passage_cut
from nodes.peers.prism import chosen
from tests.fixtures.films import services
from tests.fixtures.peers import (
    ADDER,
    ANSWER,
    DECOMPOSE,
    SELECTOR,
    call_kinds,
    expected_tally,
    films_with_graph,
    prompts,
    rule,
    run_peer,
    shown_titles,
)

QUESTION = "Where was the director of Blue Harbor born?"
SUBS = ["Who directed Blue Harbor?", "Where was #1 born?"]
# The dense ranking of the question puts Lena Marsh second; the sub-questions add no new passage.
CANDIDATES = ["Blue Harbor", "Lena Marsh", "Tomas Reyd", "Ivo Strand"]


def round_one() -> list[Any]:
    return [
        rule(DECOMPOSE, f"Question: {QUESTION}", reply={"sub_questions": [*SUBS, " "]}),
        rule(
            SELECTOR,
            "Sub-questions:\n1. Who directed Blue Harbor?\n2. Where was #1 born?",
            "Candidates:\n[1] Blue Harbor: Blue Harbor is a 1998 drama film",
            "Kept so far: none yet\n",
            "[4] Ivo Strand: ",
            reply={"keep": [1, 9]},  # 9 was never shown: ignored
        ),
        rule(
            ADDER,
            "[2] Lena Marsh: ",
            "Kept so far: 1\n",
            reply={"add": [3, 1]},  # 1 is kept already: not added twice
        ),
    ]


async def test_prism_stops_when_a_round_keeps_nothing_new(
    engine: Engine, database_url: str
) -> None:
    ids = films_with_graph(engine)
    rules = [
        *round_one(),
        rule(
            SELECTOR,
            "[3] Tomas Reyd: Tomas Reyd is a film director.",
            "Kept so far: 1, 3\n",
            reply={"keep": []},
        ),
        rule(ADDER, "Kept so far: 1, 3\n", reply={"add": []}),
        rule(ANSWER, f"Question: {QUESTION}", reply={"answer": "Lisbon"}),
    ]
    svc = services(engine, database_url, rules)
    state, nodes = await run_peer("prism", svc, QUESTION)

    assert nodes == ["start", "analyze", "gather", "select", "add", "select", "add", "answer"]
    kinds = [DECOMPOSE, SELECTOR, ADDER, SELECTOR, ADDER, ANSWER]
    assert call_kinds(svc) == kinds
    assert state["sub_questions"] == SUBS
    assert state["candidates"] == [ids[t] for t in CANDIDATES]
    assert state["kept"] == state["passages"] == [ids["Blue Harbor"], ids["Tomas Reyd"]]
    assert state["round"] == 2
    assert shown_titles(prompts(svc)[-1]) == ["Blue Harbor", "Tomas Reyd"]
    # Every Selector and Adder prompt is the same up to the kept numbers, so the local model reads
    # the candidates once per question (its cache keeps the longest common prefix).
    agent_prompts = prompts(svc)[1:5]
    shared = agent_prompts[0].split("Kept so far:")[0]
    assert all(p.split("Kept so far:")[0] == shared for p in agent_prompts)
    assert re.findall(r"^\[\d+\] ([^:]+):", shared, re.MULTILINE) == CANDIDATES
    assert (state["final_answer"], state["error"]) == ("Lisbon", None)
    tokens = state["tokens"]
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]) == expected_tally(
        kinds
    )
    assert sorted((r["node"], r["iteration"]) for r in tokens["records"]) == [
        ("add", 1),
        ("add", 2),
        ("analyze", None),
        ("answer", None),
        ("select", 1),
        ("select", 2),
    ]


async def test_prism_runs_at_most_max_rounds(engine: Engine, database_url: str) -> None:
    ids = films_with_graph(engine)
    rules = [
        *round_one(),
        # Round 2 still keeps something, but it is the last round allowed.
        rule(SELECTOR, "Kept so far: 1, 3\n", reply={"keep": [4]}),
        rule(ADDER, "Kept so far: 1, 3, 4\n", reply={"add": []}),
        rule(ANSWER, reply={"answer": "Lisbon"}),
    ]
    svc = services(engine, database_url, rules)
    state, nodes = await run_peer("prism", svc, QUESTION, max_rounds=2)

    assert nodes == ["start", "analyze", "gather", "select", "add", "select", "add", "answer"]
    assert call_kinds(svc) == [DECOMPOSE, SELECTOR, ADDER, SELECTOR, ADDER, ANSWER]
    kept = ["Blue Harbor", "Tomas Reyd", "Ivo Strand"]
    assert state["kept"] == [ids[t] for t in kept]
    assert shown_titles(prompts(svc)[-1]) == kept
    assert state["tokens"]["calls"] == 6

    # One round allowed: the Selector and the Adder once, whatever they keep.
    svc = services(engine, database_url, [*round_one(), rule(ANSWER, reply={"answer": "x"})])
    state, nodes = await run_peer("prism", svc, QUESTION, thread="one", max_rounds=1)
    assert nodes == ["start", "analyze", "gather", "select", "add", "answer"]
    assert state["kept"] == [ids["Blue Harbor"], ids["Tomas Reyd"]]


async def test_a_prompt_budget_cuts_every_shown_passage(engine: Engine, database_url: str) -> None:
    # 4 candidates in 100 characters: 25 each ("Blue Harbor is a 1998 dr…"), for the agents and then
    # for the answer, which reads the one kept passage in the whole budget (max_passage_chars 60).
    films_with_graph(engine)
    rules = [
        rule(DECOMPOSE, f"Question: {QUESTION}", reply={"sub_questions": SUBS}),
        rule(SELECTOR, "[1] Blue Harbor: Blue Harbor is a 1998 dr…\n", reply={"keep": [1]}),
        rule(
            ADDER,
            "[1] Blue Harbor: Blue Harbor is a 1998 dr…\n",
            "Kept so far: 1\n",
            reply={"add": []},
        ),
        rule(ANSWER, reply={"answer": "Lisbon"}),
    ]
    svc = services(engine, database_url, rules)
    state, nodes = await run_peer(
        "prism", svc, QUESTION, prompt_chars=100, max_passage_chars=60, max_rounds=1
    )
    assert nodes == ["start", "analyze", "gather", "select", "add", "answer"]
    assert state["final_answer"] == "Lisbon"
    answer_prompt = prompts(svc)[-1]
    assert "Blue Harbor is a 1998 drama film" in answer_prompt  # 60 characters, not 25
    text_line = next(
        line for line in answer_prompt.split("\n") if line.startswith("Blue Harbor is")
    )
    assert 25 < len(text_line) <= 60 and text_line.endswith("…")


def test_passage_cut_shares_the_budget() -> None:
    assert passage_cut(1500, 16_000, 4) == 1500  # the budget does not bind
    assert passage_cut(1500, 16_000, 100) == 160
    assert passage_cut(0, 100, 3) == 33  # no per-passage cut: the share alone
    assert passage_cut(1500, 0, 100) == 1500  # no budget
    assert passage_cut(200, 10, 100) == 1  # never a cut of 0, which means "no cut"
    # Every peer's prompts cut through its Context: PRISM has a budget by default, the others none.
    assert PrismContext(corpus="films").passage_chars(100) == 160
    assert SelfAskContext(corpus="films").passage_chars(100) == 1500
    assert SelfAskContext(corpus="films", prompt_chars=3000).passage_chars(100) == 30


def test_the_selector_and_adder_merge_on_a_hand_made_candidate_set() -> None:
    state: PrismState = {"candidates": [10, 20, 30, 40], "kept": [30]}
    assert not_kept(state) == [1, 2, 4]
    assert kept_numbers(state) == [3]
    # Named numbers count once, in candidate order, and only where they were offered.
    assert chosen([4, 4, 3, 7, 1], offered=[1, 2, 4], most=10) == [1, 4]
    assert with_kept(state, [4, 1]) == [10, 30, 40]
    assert with_kept(state, []) == [30]
    assert with_kept({"candidates": [10, 20], "kept": [20]}, [1, 2]) == [10, 20]
