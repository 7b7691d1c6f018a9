"""Every peer method runs through the one `grasp eval` runner; --offset and --limit pick a slice."""

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from evals.qa_runner import GRAPH_METHODS, METHODS
from graphs.models.scripted_model import ScriptedReply
from store.corpora import corpus_id
from store.ledger import CallRecord, record_call
from tests.evals.peer_evals import ledger_tally, lines_of, peer_eval, thread_values
from tests.fixtures.eval_films import CHAIN_Q, evaluate, make_services
from tests.fixtures.peers import (
    ADDER,
    ANSWER,
    CLOSED_BOOK,
    DECOMPOSE,
    FINDINGS,
    SELECTOR,
    THINK,
    films_with_graph,
    rule,
)


def anything_rules() -> list[ScriptedReply]:
    """One reply for every peer prompt kind, as often as asked: each method answers "Lisbon"."""
    lisbon = {"answer": "Lisbon"}
    return [
        rule(DECOMPOSE, reply={"sub_questions": [CHAIN_Q]}, times=None),
        rule(SELECTOR, reply={"keep": [1]}, times=None),
        rule(ADDER, reply={"add": []}, times=None),
        rule(
            THINK, reply={"thought": "Reyd was born in Lisbon.", "done": True, **lisbon}, times=None
        ),
        *(rule(kind, reply=lisbon, times=None) for kind in (ANSWER, FINDINGS, CLOSED_BOOK)),
    ]


@pytest.mark.parametrize("method", [m for m in METHODS if m != "grasp"])
async def test_every_peer_runs_through_the_one_runner(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path, method: str
) -> None:
    films_with_graph(engine)
    # The pooled index cost 1,000 tokens: 500 per question of the file, for graph readers only.
    record_call(
        engine, CallRecord("extract", "scripted", 900, 100, 0.0, False, corpus_id(engine, "films"))
    )
    svc, _, _ = make_services(engine, database_url, anything_rules())
    cli = peer_eval(questions, tmp_path / "runs", "--method", method, "--limit", "1")

    run, outcome, _ = await evaluate(cli, svc, None)

    assert (outcome.answered, outcome.failed) == (1, [])
    line = lines_of(run.results)["2hop__chain"]
    assert (line["prediction"], line["em"], line["method"]) == ("Lisbon", 1.0, method)
    # The line's tokens are the run state's tally, and the ledger holds exactly those calls.
    tally = (line["input_tokens"], line["output_tokens"], line["calls"])
    assert tally == ledger_tally(engine, line["thread_id"]) and line["calls"] >= 1
    assert line["indexing_tokens"] == (500.0 if method in GRAPH_METHODS else 0.0)
    assert line["settings"]["method"] == method and method in line["settings"]
    assert (line["attribution"] is None) == (method == "none")
    snapshot = await thread_values(svc, database_url, method, line["thread_id"])
    assert (snapshot.values["final_answer"], snapshot.next) == ("Lisbon", ())
    assert snapshot.metadata["grasp_method"] == method


async def test_offset_and_limit_pick_a_held_out_slice(
    engine: Engine,
    database_url: str,
    questions: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    films_with_graph(engine)
    svc, _, _ = make_services(engine, database_url, anything_rules())
    ids = [q["id"] for q in json.loads(questions.read_text())]
    assert len(ids) >= 2

    run, outcome, _ = await evaluate(
        peer_eval(
            questions, tmp_path / "runs", "--method", "dense", "--offset", "1", "--limit", "1"
        ),
        svc,
        None,
    )

    # Only the second question of the file was asked.
    assert outcome.answered == 1 and list(lines_of(run.results)) == [ids[1]]
    with pytest.raises(SystemExit):
        peer_eval(questions, tmp_path / "runs", "--offset", "-1")
    assert "must be 0 or more, got -1" in capsys.readouterr().err
