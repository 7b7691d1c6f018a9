"""The dense and closed-book baseline eval runs end to end on the films corpus, and their report."""

import json
import re
from pathlib import Path

from sqlalchemy import Engine

from evals.reports import write_report
from graphs.peers.registry import build_method_graph
from graphs.runtime.checkpoints import open_checkpointer
from store.corpora import corpus_id
from store.ledger import CallRecord, record_call
from tests.fixtures.eval_films import (
    CHAIN_Q,
    CLOSED,
    COMPARE_Q,
    TEXTS,
    answer,
    args,
    evaluate,
    make_services,
)
from tests.fixtures.films import build_corpus
from tests.fixtures.peers import ANSWER


async def test_dense_and_closed_book_baselines(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    build_corpus(engine)
    record_call(
        engine, CallRecord("extract", "scripted", 900, 100, 0.0, False, corpus_id(engine, "films"))
    )
    # The dense and closed-book graphs' own answer prompts (graphs/peers, nodes/peers/answer.py).
    rules = [
        answer(
            ANSWER, "Tomas Reyd was born in Lisbon in 1950", f"Question: {CHAIN_Q}", text="Lisbon"
        ),
        answer(ANSWER, f"Question: {COMPARE_Q}", text="Ivo Strand"),
        answer(CLOSED, text="Porto", tokens=(50, 3)),
    ]
    svc, _, _ = make_services(engine, database_url, rules)
    out = str(tmp_path / "runs")
    dense = args(
        "eval",
        str(questions),
        "--corpus",
        "films",
        "--method",
        "dense",
        "--p-samples",
        "0",
        "--out",
        out,
    )
    run, _, summaries = await evaluate(dense, svc, None)
    lines = [json.loads(x) for x in run.results.read_text().splitlines()]
    assert [
        (r["prediction"], r["em"], r["tokens"], r["calls"], r["total_tokens"]) for r in lines
    ] == [
        ("Lisbon", 1.0, 405, 1, 405.0),
        ("Ivo Strand", 0.0, 405, 1, 405.0),
    ]
    # The four passages are all in the top 5, and the answer prompt showed them.
    assert [len(r["passages"]) for r in lines] == [4, 4]
    # So the wrong comparison answer is a reading failure: every gold passage was shown.
    facts = [r["attribution"] for r in lines]
    assert [(f["cause"], f["evidence_recall"]) for f in facts] == [
        ("correct", 1.0),
        ("reading", 1.0),
    ]
    assert sorted(facts[1]["shown"]["titles"]) == sorted(TEXTS)
    assert facts[1]["shown"]["ids"] == lines[1]["passages"]
    assert lines[0]["settings"] == {
        "method": "dense",
        "model": "scripted",
        "dense": {"chat_model": None, "max_passage_chars": 1500, "prompt_chars": 0, "k": 5},
    }
    # Each line's run is checkpointed under its thread, with the dense graph's state.
    async with open_checkpointer(database_url) as saver:
        graph = build_method_graph("dense", svc, saver)
        snapshot = await graph.aget_state({"configurable": {"thread_id": lines[1]["thread_id"]}})
    assert (snapshot.values["final_answer"], snapshot.values["passages"]) == (
        "Ivo Strand",
        lines[1]["passages"],
    )
    assert dict(snapshot.metadata or {})["grasp_method"] == "dense"
    assert (summaries[0].em, summaries[0].judge, summaries[0].judge_lenient) == (0.5, 0.5, 0.5)

    none = args(
        "eval",
        str(questions),
        "--corpus",
        "films",
        "--method",
        "none",
        "--no-judge",
        "--p-samples",
        "0",
        "--out",
        out,
    )
    run, _, summaries = await evaluate(none, svc, None)
    lines = [json.loads(x) for x in run.results.read_text().splitlines()]
    assert [
        (r["prediction"], r["em"], r["tokens"], r["indexing_tokens"], r["passages"]) for r in lines
    ] == [
        ("Porto", 0.0, 53, 0.0, []),
        ("Porto", 0.0, 53, 0.0, []),
    ]
    assert [r["attribution"] for r in lines] == [None, None]  # closed-book: nothing was shown
    report = write_report(tmp_path / "runs" / "films")
    table = (tmp_path / "runs/films/report.md").read_text()
    # Between calls/q and SE: the wall seconds per question, measured, so any number.
    wall = r" \| \d+\.\d \| "
    assert re.search(
        r"\| dense \| 2 \| 0.500 \| 0.500 \| 0.500 \| 0.500 \| 405 \| 0 \| 405 \| 1.0"
        + wall
        + r"n/a \|",
        table,
    )
    assert re.search(
        r"\| none \| 2 \| 0.000 \| 0.000 \| n/a \| n/a \| 53 \| 0 \| 53 \| 1.0" + wall + r"n/a \|",
        table,
    )
    assert "| dense | 2 | 1 (50%) | 0 (0%) | 0 (0%) | 1 (50%) | 0 (0%) | 0 (0%) | 1.000 |" in table
    assert list(report.causes) == ["dense"]
    assert [p.name for p in report.files] == ["report.md", "accuracy_vs_tokens.png"]
    # Token anatomy: dense's one answer call a question, its 405 tokens split by part.
    row = re.search(r"\| dense \| answer \| 1\.0 \| ([\d |]+)\|", table)
    assert row is not None and "## Token anatomy" in table
    tokens_in, tokens_out, instructions, evidence, history, question = map(int, row[1].split("|"))
    assert tokens_in + tokens_out == 405 and history == 0 and evidence > question > 0
    assert instructions + evidence + history + question == tokens_in
