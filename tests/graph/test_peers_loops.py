"""The iterative peers end to end with a scripted model: IRCoT + PPR, SA-RAG + CoT, Self-Ask."""

from typing import Any

import pytest
from sqlalchemy import Engine

from tests.fixtures.films import services
from tests.fixtures.peers import (
    ANSWER,
    DECOMPOSE,
    FINDINGS,
    THINK,
    call_kinds,
    expected_tally,
    films_with_graph,
    prompts,
    rule,
    run_peer,
    shown_titles,
)

QUESTION = "Where was the director of Blue Harbor born?"
FIRST = "Blue Harbor was directed by Tomas Reyd."
SECOND = "Tomas Reyd was born in Lisbon."

# Both retrievals rank the question's passages as PPR does; SA-RAG's thresholds are lowered
# for the hashed bag-of-words vectors of the test embedder.
LOOPS = [
    ("ircot", {"passages_per_step": 2}),
    (
        "sa-rag-cot",
        {"passages_per_step": 2, "activation_threshold": 0.1, "passage_threshold": 0.0},
    ),
]


@pytest.mark.parametrize(("method", "settings"), LOOPS)
async def test_a_cot_loop_retrieves_with_each_sentence(
    engine: Engine, database_url: str, method: str, settings: dict[str, Any]
) -> None:
    ids = films_with_graph(engine)
    rules = [
        rule(
            THINK,
            "Reasoning so far: (none yet)",
            reply={"thought": f" {FIRST} ", "done": False, "answer": ""},
        ),
        rule(
            THINK,
            f"Reasoning so far: {FIRST}",
            reply={"thought": SECOND, "done": True, "answer": "Lisbon"},
        ),
        rule(ANSWER, f"Notes:\n- {FIRST}\n- {SECOND}", reply={"answer": "Lisbon"}),
    ]
    svc = services(engine, database_url, rules)
    state, nodes = await run_peer(method, svc, QUESTION, **settings)

    assert nodes == ["start", "retrieve", "think", "retrieve", "think", "answer"]
    assert call_kinds(svc) == [THINK, THINK, ANSWER]
    # The question finds Lena Marsh beside Blue Harbor; the first sentence finds Tomas Reyd.
    first, second, answer = prompts(svc)
    assert shown_titles(first) == ["Blue Harbor", "Lena Marsh"]
    assert (
        shown_titles(second) == shown_titles(answer) == ["Blue Harbor", "Lena Marsh", "Tomas Reyd"]
    )
    assert state["passages"] == [ids["Blue Harbor"], ids["Lena Marsh"], ids["Tomas Reyd"]]
    assert state["notes"] == [FIRST, SECOND]
    assert (state["final_answer"], state["error"]) == ("Lisbon", None)
    tokens = state["tokens"]
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]) == expected_tally(
        [THINK, THINK, ANSWER]
    )
    assert [(r["node"], r["iteration"]) for r in tokens["records"]] == [
        ("think", 1),
        ("think", 2),
        ("answer", None),
    ]


async def test_the_cot_loop_stops_at_max_steps(engine: Engine, database_url: str) -> None:
    films_with_graph(engine)
    rules = [
        rule(THINK, "Reasoning so far: (none yet)", reply={"thought": FIRST, "done": False}),
        rule(THINK, f"Reasoning so far: {FIRST}", reply={"thought": "Next: Reyd's birthplace."}),
        rule(ANSWER, reply={"answer": "unknown"}),
    ]
    svc = services(engine, database_url, rules)
    state, nodes = await run_peer("ircot", svc, QUESTION, max_steps=2)
    assert nodes == ["start", "retrieve", "think", "retrieve", "think", "answer"]
    assert call_kinds(svc) == [THINK, THINK, ANSWER]
    assert state["step"] == 2 and state["final_answer"] == "unknown"
    assert state["notes"] == [FIRST, "Next: Reyd's birthplace."]


async def test_a_repeated_sentence_ends_the_loop(engine: Engine, database_url: str) -> None:
    films_with_graph(engine)
    rules = [
        rule(THINK, reply={"thought": FIRST, "done": False}, times=None),
        rule(ANSWER, f"Notes:\n- {FIRST}\n\nPassages:", reply={"answer": "Lisbon"}),
    ]
    svc = services(engine, database_url, rules)
    state, nodes = await run_peer("ircot", svc, QUESTION)  # up to 4 steps
    assert nodes == ["start", "retrieve", "think", "retrieve", "think", "answer"]
    assert call_kinds(svc) == [THINK, THINK, ANSWER]
    assert (state["step"], state["notes"], state["final_answer"]) == (2, [FIRST], "Lisbon")


async def test_an_unusable_thought_ends_the_loop_and_the_answer_still_comes(
    engine: Engine, database_url: str
) -> None:
    films_with_graph(engine)
    rules = [rule(THINK, reply={"thought": ""}, times=2), rule(ANSWER, reply={"answer": "Oslo"})]
    svc = services(engine, database_url, rules)
    state, nodes = await run_peer("ircot", svc, QUESTION)
    assert nodes == ["start", "retrieve", "think", "answer"]
    # The unusable reply is asked again once; both calls are billed.
    assert call_kinds(svc) == [THINK, THINK, ANSWER]
    assert state["tokens"]["calls"] == 3
    assert state["final_answer"] == "Oslo"
    assert state["error"].startswith("reasoning step 1 unusable")


async def test_self_ask_answers_sub_questions_in_order(engine: Engine, database_url: str) -> None:
    ids = films_with_graph(engine)
    rules = [
        rule(
            DECOMPOSE,
            f"Question: {QUESTION}",
            reply={"sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"]},
        ),
        rule(ANSWER, "Question: Who directed Blue Harbor?", reply={"answer": "Tomas Reyd"}),
        # The second sub-question sees the first answer, in its text and as a note.
        rule(
            ANSWER,
            "Notes:\n- Who directed Blue Harbor? → Tomas Reyd",
            "Question: Where was Tomas Reyd born?",
            reply={"answer": "Lisbon"},
        ),
        rule(
            FINDINGS,
            "1. Who directed Blue Harbor? → Tomas Reyd\n2. Where was Tomas Reyd born? → Lisbon",
            f"Question: {QUESTION}",
            reply={"answer": "Lisbon"},
        ),
    ]
    svc = services(engine, database_url, rules)
    # k=1: with the hashing embedder the runners-up tie at cosine 0, in no fixed order.
    state, nodes = await run_peer("self-ask", svc, QUESTION, k=1)

    assert nodes == ["start", "decompose", "ask_next", "ask_next", "answer"]
    kinds = [DECOMPOSE, ANSWER, ANSWER, FINDINGS]
    assert call_kinds(svc) == kinds
    _, first, second, _ = prompts(svc)
    assert shown_titles(first) == ["Blue Harbor"]
    assert shown_titles(second) == ["Tomas Reyd"]
    assert state["sub_answers"] == ["Tomas Reyd", "Lisbon"]
    assert state["passages"] == [ids["Blue Harbor"], ids["Tomas Reyd"]]
    assert (state["final_answer"], state["error"]) == ("Lisbon", None)
    tokens = state["tokens"]
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]) == expected_tally(
        kinds
    )
