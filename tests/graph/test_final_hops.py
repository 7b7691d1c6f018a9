"""final_hops=read: a hop no other builds on hands its passages to the reader unjudged."""

import pytest
from sqlalchemy import Engine

from graphs.cli.ask_report import AgentTrace, Round
from graphs.cli.chat import AnswerPrinter
from graphs.runtime.services import Services
from graphs.viewer.model import PlanNode, RoundView
from graphs.viewer.run_page import round_html
from graphs.viewer.svg import box_lines
from tests.fixtures.films import (
    EVALUATE,
    PLAN,
    READER,
    SELECT,
    build_corpus,
    rule,
    run,
    services,
)
from tests.graph.test_lean_agent import QUESTION, prompts, question_rules

READS_LISBON = rule(
    READER, "Question: ", "Tomas Reyd was born in Lisbon", reply={"answer": "Lisbon"}
)
SETTINGS = {"first_search": "question", "synthesis": "reader"}


def reader_services(engine: Engine, database_url: str) -> Services:
    """The films corpus and a script whose last hop finds Tomas Reyd's passage and reads Lisbon."""
    ids = build_corpus(engine)
    finds_reyd = rule(
        SELECT, "Looking for: Where was Tomas Reyd born?", reply={"entity_ids": [ids["Tomas Reyd"]]}
    )
    return services(engine, database_url, [finds_reyd, READS_LISBON, *question_rules(ids)])


async def test_the_final_hop_is_answered_by_the_reader_without_an_evaluator_call(
    engine: Engine, database_url: str
) -> None:
    svc = reader_services(engine, database_url)
    state, trace = await run(svc, QUESTION, thread="final-read", final_hops="read", **SETTINGS)

    # Hop 1 (hop 2 builds on it) is judged; hop 2 searches once and is read by the reader.
    kinds = [next(k for k in (PLAN, SELECT, EVALUATE, READER) if k in p) for p in prompts(svc)]
    assert kinds == [PLAN, SELECT, EVALUATE, SELECT, READER]
    evaluations = [p for p in prompts(svc) if EVALUATE in p]
    assert len(evaluations) == 1 and "Sub-question: Who directed Blue Harbor?" in evaluations[0]
    assert trace["agents"][2] == [
        "rewrite",
        "search",
        "select_entities",
        "gather_evidence",
        "evaluate",
    ]
    (read,) = [p for p in prompts(svc) if READER in p]
    assert "Tomas Reyd was born in Lisbon" in read
    assert state["answers"] == {1: "Tomas Reyd", 2: ""}
    assert state["final_answer"] == "Lisbon"
    assert [r["node"] for r in state["tokens"]["records"]].count("evaluate") == 1
    # The final answer is cited from hop 2's reading, verified.
    assert any(
        c["title"] == "Tomas Reyd" and c["hop"] == 2 and c["verified"] for c in state["citations"]
    )


async def test_a_final_hop_that_found_nothing_still_asks_its_evaluator(
    engine: Engine, database_url: str
) -> None:
    ids = build_corpus(engine)
    svc = services(engine, database_url, [READS_LISBON, *question_rules(ids)])
    state, _ = await run(svc, QUESTION, thread="final-empty", final_hops="read", **SETTINGS)

    # Round 1 of hop 2 selected no entity and found no passage: with nothing to hand on, the
    # evaluator searches again, and the round that found the passage answers as before.
    evaluations = [p for p in prompts(svc) if EVALUATE in p]
    assert len(evaluations) == 3
    assert "(nothing new was found)" in evaluations[1]
    assert state["answers"] == {1: "Tomas Reyd", 2: "Lisbon"}
    assert state["final_answer"] == "Lisbon"


def test_a_hop_left_to_the_reader_is_shown_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    AnswerPrinter().progress({"event": "hop_done", "index": 2, "answer": ""})
    assert "→ (left to the reader)" in capsys.readouterr().out
    box = box_lines(PlanNode(2, "Where was #1 born?", [1], 2, answer=""))
    assert box[-1] == "→ (left to the reader)"
    assert box_lines(PlanNode(2, "Where was #1 born?", [1], None, answer=None))[-1] == "→ …"
    page = round_html(RoundView(1, "Where was Tomas Reyd born?", [], decision="DONE", answer=""))
    assert "DONE → <b>(left to the reader)</b>" in page
    report = AgentTrace(2, rounds=[Round(1, "Where?", [], ["Lisbon"], decision="DONE")])
    assert "    decision: DONE → (left to the reader)" in report.lines()
    answered = AgentTrace(1, rounds=[Round(1, "Who?", [], decision="DONE", answer="Tomas Reyd")])
    assert "    decision: DONE → Tomas Reyd" in answered.lines()


async def test_the_reader_also_reads_the_questions_best_passage_and_cites_it(
    engine: Engine, database_url: str
) -> None:
    # The one hop picks the wrong person (Ivo Strand), so the hops never read Lena Marsh's
    # passage; the whole question's one-pass search finds it, the reader reads it last and
    # answers from it, and the answer is cited from it, with no hop.
    ids = build_corpus(engine)
    question = "In which city was Lena Marsh born?"
    svc = services(
        engine,
        database_url,
        [
            rule(
                PLAN,
                f"Question: {question}",
                reply={"plan": "Find her birthplace.", "sub_questions": [question]},
            ),
            rule(SELECT, "Looking for: ", reply={"entity_ids": [ids["Ivo Strand"]]}),
            rule(READER, "Lena Marsh was born in 1958 in Riga", reply={"answer": "Riga"}),
        ],
    )
    state, _ = await run(svc, question, thread="question-best", final_hops="read", **SETTINGS)

    (read,) = [p for p in prompts(svc) if READER in p]
    assert read.index("Ivo Strand was born") < read.index("Lena Marsh was born in 1958 in Riga")
    assert state["final_answer"] == "Riga"
    assert [(c["title"], c["hop"], c["verified"]) for c in state["citations"]] == [
        ("Lena Marsh", None, True)
    ]
