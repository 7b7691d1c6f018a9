"""`grasp eval --set max_tokens=N`: lines and summary record that the budget ended a search."""

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from evals import qa_evaluate
from evals.qa_runner import answer_of
from graphs.models.scripted_model import ScriptedChatModel
from tests.fixtures.eval_films import CHAIN_Q, COMPARE_Q, QUESTIONS, args, evaluate, make_services
from tests.fixtures.films import build_corpus
from tests.fixtures.peers import ANSWER, DECOMPOSE, FINDINGS, expected_tally, rule


async def test_eval_lines_record_a_budget_stop(
    engine: Engine, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    questions = tmp_path / "musique_toy.json"
    questions.write_text(json.dumps(QUESTIONS))
    build_corpus(engine)
    rules = [
        rule(
            DECOMPOSE,
            f"Question: {CHAIN_Q}",
            reply={"sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"]},
        ),
        rule(ANSWER, "Question: Who directed Blue Harbor?", reply={"answer": "Tomas Reyd"}),
        rule(FINDINGS, f"Question: {CHAIN_Q}", reply={"answer": "Tomas Reyd"}),
        rule(DECOMPOSE, f"Question: {COMPARE_Q}", reply={"sub_questions": [COMPARE_Q]}),
        rule(ANSWER, f"Question: {COMPARE_Q}", reply={"answer": "Ivo Strand"}),
        rule(FINDINGS, f"Question: {COMPARE_Q}", reply={"answer": "Ivo Strand"}),
    ]
    svc, _, _ = make_services(engine, database_url, rules)
    argv = ["eval", str(questions), "--corpus", "films", "--no-judge", "--p-samples", "0"]
    # decompose 130 + one sub-answer 406 = 536: the chain's second sub-question is never asked;
    # the comparison has one sub-question, so nothing is left for the budget to stop.
    cli = args(
        *argv,
        "--out",
        str(tmp_path / "runs"),
        "--method",
        "self-ask",
        "--set",
        "k=1",
        "--set",
        "max_tokens=536",
    )

    # The summary's commit is the one the run started at: report how many calls had been made.
    model = svc.llm.model
    assert isinstance(model, ScriptedChatModel)
    monkeypatch.setattr(
        qa_evaluate, "provenance", lambda: {"command": "c", "commit": f"{len(model.prompts)} calls"}
    )
    run, outcome, summaries = await evaluate(cli, svc, None)

    assert (outcome.answered, outcome.failed) == (2, [])
    lines = {r["id"]: r for r in map(json.loads, run.results.read_text().splitlines())}
    chain, compare = lines["2hop__chain"], lines["3hop__compare"]
    assert (chain["budget_stopped"], compare["budget_stopped"]) == (True, False)
    assert (chain["input_tokens"], chain["output_tokens"], chain["calls"]) == expected_tally(
        [DECOMPOSE, ANSWER, FINDINGS]
    )
    assert chain["settings"]["self-ask"]["max_tokens"] == 536
    summary = json.loads(run.results.with_name(run.results.stem + ".summary.json").read_text())
    assert summary["commit"] == "0 calls"
    assert summaries[0].budget_stopped == 1
    assert summaries[0].as_json()["budget_stopped"] == 1


def test_a_state_without_the_flag_reads_as_not_stopped() -> None:
    assert answer_of({"final_answer": "x"}).budget_stopped is False
    assert answer_of({"final_answer": "x", "budget_stopped": True}).budget_stopped is True
