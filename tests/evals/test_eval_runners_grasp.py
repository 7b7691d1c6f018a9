"""The GRASP eval runner end to end on the films corpus: scores, judge, bills, resumes."""

import json
import math
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from graphs.agent.graph import build_grasp_graph
from graphs.models.scripted_model import ScriptedReply
from graphs.runtime.checkpoints import open_checkpointer
from graphs.runtime.services import Services
from store.corpora import corpus_id
from store.ledger import CallRecord, record_call
from tests.fixtures.eval_films import (
    COMPARE_Q,
    args,
    evaluate,
    make_services,
    prompts,
    unjudged_eval,
)
from tests.fixtures.films import (
    PAPER_VOTE_ARGS,
    PLAN,
    REWRITE,
    build_corpus,
    chain_rules,
    comparison_rules,
)


async def test_grasp_run_scores_judges_bills_and_resumes(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    ids = build_corpus(engine)
    # Indexing the pooled corpus cost 1,000 tokens: 500 per question of the file.
    record_call(
        engine, CallRecord("extract", "scripted", 900, 100, 0.0, False, corpus_id(engine, "films"))
    )
    svc, judge, sampler = make_services(
        engine, database_url, chain_rules(ids) + comparison_rules(ids)
    )
    cli = args(
        "eval",
        str(questions),
        *PAPER_VOTE_ARGS,
        "--corpus",
        "films",
        "--method",
        "grasp",
        "--concurrency",
        "2",
        "--out",
        str(tmp_path / "runs"),
    )

    run, outcome, summaries = await evaluate(cli, svc, sampler)

    assert run.results == tmp_path / "runs" / "films" / "grasp.jsonl"
    assert (outcome.answered, outcome.skipped, outcome.failed) == (2, 0, [])
    lines = [json.loads(line) for line in run.results.read_text().splitlines()]
    chain = next(r for r in lines if r["id"] == "2hop__chain")
    assert {k: chain[k] for k in ("prediction", "gold", "em", "f1", "hops", "method")} == {
        "prediction": "Lisbon",
        "gold": ["Lisbon"],
        "em": 1.0,
        "f1": 1.0,
        "hops": 2,
        "method": "grasp",
    }
    # The system's tokens are the graph's own (1,770 in + 181 out over 10 calls); the judge's
    # two calls (2,002 tokens) are kept apart and billed nowhere.
    assert (chain["input_tokens"], chain["output_tokens"], chain["tokens"], chain["calls"]) == (
        1770,
        181,
        1951,
        10,
    )
    assert (chain["judge_strict"], chain["judge_lenient"], chain["judge_tokens"]) == (
        True,
        True,
        2002,
    )
    assert (chain["indexing_tokens"], chain["total_tokens"]) == (500.0, 2451.0)
    # Its anatomy bills every call to a node, and every input token to one prompt part.
    anatomy = chain["anatomy"]
    assert sum(row["calls"] for row in anatomy.values()) == 10
    assert sum(row["input"] for row in anatomy.values()) == 1770
    assert sum(row["output"] for row in anatomy.values()) == 181
    for row in anatomy.values():
        parts = row["instructions"] + row["evidence"] + row["history"] + row["question"]
        assert parts == row["input"]
    assert anatomy["evaluate"]["evidence"] > 0 and anatomy["plan"]["evidence"] == 0
    assert chain["thread_id"] == "eval:grasp:films:2hop__chain"
    # Its citations, each hop's sentence, scored against the question's gold passages.
    assert [(c["title"], c["hop"], c["verified"]) for c in chain["citations"]] == [
        ("Blue Harbor", 1, True),
        ("Tomas Reyd", 2, True),
    ]
    cited = chain["citation"]
    assert (cited["precision"], cited["recall"], cited["answer_supported"]) == (1.0, 1.0, True)
    assert cited["cited"] == cited["gold"] == [c["passage_id"] for c in chain["citations"]]
    # The line's thread is checkpointed: it opens in `grasp show` and in Studio.
    snapshot = await thread_state(svc, database_url, chain["thread_id"])
    assert (snapshot.values["final_answer"], snapshot.next) == ("Lisbon", ())
    compare = next(r for r in lines if r["id"] == "3hop__compare")
    assert (compare["prediction"], compare["em"], compare["tokens"], compare["total_tokens"]) == (
        "Lena Marsh",
        1.0,
        1568,
        2068.0,
    )

    # p_i: chain 2 of 5 right → 3/7; comparison 0 of 5 → 1/7. Both questions judged correct.
    overall, two, three = summaries
    bits = -math.log2(3 / 7) - math.log2(1 / 7)
    assert (overall.n, overall.em, overall.judge, overall.tokens) == (2, 1.0, 1.0, 3519)
    assert overall.success_economy == pytest.approx(3519 / bits)
    assert (two.group, two.n, three.group, three.n) == ("2hop", 1, "3hop", 1)
    cache = [
        json.loads(line)
        for line in (tmp_path / "runs/films/cache/closed_book.jsonl").read_text().splitlines()
    ]
    assert sorted((c["question_id"], c["correct"], c["p"]) for c in cache) == [
        ("2hop__chain", 2, 3 / 7),
        ("3hop__compare", 0, 1 / 7),
    ]
    summary = json.loads((tmp_path / "runs/films/grasp.summary.json").read_text())
    assert summary["groups"][0]["tokens"] == 3519
    assert summary["command"] and "commit" in summary  # what docs/results.md shows per row
    # Both answers cite their two gold passages, and both are supported.
    assert summary["citations"] == {
        "n": 2,
        "precision": 1.0,
        "recall": 1.0,
        "answer_support": 1.0,
        "supported_n": 2,
        "cited_per_question": 2.0,
        "uncited": 0,
    }

    # A second run skips both questions and reuses the p_i cache: no model is called again.
    seen = (len(prompts(svc.llm)), len(prompts(judge)), len(prompts(sampler)))
    _, again, summaries_again = await evaluate(cli, svc, sampler)
    assert (again.answered, again.skipped) == (0, 2)
    assert (len(prompts(svc.llm)), len(prompts(judge)), len(prompts(sampler))) == seen
    assert summaries_again == summaries
    assert len(run.results.read_text().splitlines()) == 2


async def thread_state(svc: Services, database_url: str, thread: str) -> Any:
    async with open_checkpointer(database_url) as saver:
        graph = build_grasp_graph(svc, saver)
        return await graph.aget_state({"configurable": {"thread_id": thread}})


async def test_an_interrupted_question_continues_from_its_checkpoint(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    ids = build_corpus(engine)
    # The model dies once, on the second hop's rewrite: the plan and hop 1 are already saved.
    crash = ScriptedReply(
        when=[REWRITE, "Sub-question: Where was Tomas Reyd born?"],
        reply="",
        error="model process died",
        times=1,
    )
    svc, _, _ = make_services(engine, database_url, [crash, *chain_rules(ids)])
    cli = unjudged_eval(questions, tmp_path / "runs", "--limit", "1")
    thread = "eval:grasp:films:2hop__chain"

    run, outcome, _ = await evaluate(cli, svc, None)
    assert (outcome.answered, len(outcome.failed)) == (0, 1)
    assert outcome.failed[0][0] == "2hop__chain" and "model process died" in outcome.failed[0][1]
    assert not run.results.exists() or run.results.read_text() == ""
    stopped = await thread_state(svc, database_url, thread)
    assert stopped.next == ("sub_agent",)
    assert list(stopped.values["answers"].values()) == ["Tomas Reyd"]

    _, outcome, _ = await evaluate(cli, svc, None)
    assert (outcome.answered, outcome.failed) == (1, [])
    line = json.loads(run.results.read_text())
    # Neither the planner nor hop 1 ran again, and the tally equals an uninterrupted run's.
    assert len([p for p in prompts(svc.llm) if PLAN in p]) == 1
    hop_one = "Sub-question: Who directed Blue Harbor?"
    assert len([p for p in prompts(svc.llm) if REWRITE in p and hop_one in p]) == 1
    assert (line["prediction"], line["input_tokens"], line["output_tokens"], line["calls"]) == (
        "Lisbon",
        1770,
        181,
        10,
    )

    # With its line gone, the finished thread is answered afresh, not replayed or double-billed.
    run.results.unlink()
    _, outcome, _ = await evaluate(cli, svc, None)
    assert outcome.answered == 1
    line = json.loads(run.results.read_text())
    assert len([p for p in prompts(svc.llm) if PLAN in p]) == 2
    assert (line["prediction"], line["tokens"], line["calls"]) == ("Lisbon", 1951, 10)


async def test_resume_answers_only_what_is_missing(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    ids = build_corpus(engine)
    svc, _, _ = make_services(engine, database_url, chain_rules(ids) + comparison_rules(ids))
    first = unjudged_eval(questions, tmp_path / "runs", "--limit", "1")
    _, outcome, _ = await evaluate(first, svc, None)
    assert (outcome.answered, outcome.skipped) == (1, 0)
    plans = [p for p in prompts(svc.llm) if "You split a question" in p]
    assert len(plans) == 1
    rest = unjudged_eval(questions, tmp_path / "runs")
    run, outcome, summaries = await evaluate(rest, svc, None)
    assert (outcome.answered, outcome.skipped) == (1, 1)
    plans = [p for p in prompts(svc.llm) if "You split a question" in p]
    assert len(plans) == 2 and COMPARE_Q in plans[1]
    assert [json.loads(x)["id"] for x in run.results.read_text().splitlines()] == [
        "2hop__chain",
        "3hop__compare",
    ]
    assert (summaries[0].judge, summaries[0].success_economy) == (None, None)
