"""`grasp eval` for Self-Ask and PRISM: lines, tokens, causes, kept-set scores, resume, report."""

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from evals.eval_page import render_eval_page
from evals.reports import write_report
from evals.results import SettingsChanged
from graphs.models.scripted_model import ScriptedReply
from tests.evals.peer_evals import ledger_tally, lines_of, peer_eval, thread_values
from tests.fixtures.eval_films import (
    CHAIN_Q,
    COMPARE_Q,
    evaluate,
    make_services,
    prompts,
)
from tests.fixtures.films import build_corpus
from tests.fixtures.peers import (
    ADDER,
    ANSWER,
    DECOMPOSE,
    FINDINGS,
    SELECTOR,
    expected_tally,
    rule,
    shown_titles,
)

# PRISM's candidates for the chain question, in pool order (the dense ranking over films; the
# same order tests/graph/test_peers_prism.py checks).
CHAIN_CANDIDATES = ["Blue Harbor", "Lena Marsh", "Tomas Reyd", "Ivo Strand"]


def self_ask_rules(crash: bool = False) -> list[ScriptedReply]:
    """Self-Ask solves the chain in two steps and answers the comparison wrong in one."""
    rules = [
        rule(
            DECOMPOSE,
            f"Question: {CHAIN_Q}",
            reply={"sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"]},
        ),
        rule(ANSWER, "Question: Who directed Blue Harbor?", reply={"answer": "Tomas Reyd"}),
        rule(ANSWER, "Question: Where was Tomas Reyd born?", reply={"answer": "Lisbon"}),
        rule(FINDINGS, f"Question: {CHAIN_Q}", reply={"answer": "Lisbon"}),
        rule(DECOMPOSE, f"Question: {COMPARE_Q}", reply={"sub_questions": [COMPARE_Q]}),
        rule(ANSWER, f"Question: {COMPARE_Q}", reply={"answer": "Ivo Strand"}),
        rule(FINDINGS, f"Question: {COMPARE_Q}", reply={"answer": "Ivo Strand"}),
    ]
    if crash:
        # The model dies once, on the chain's second sub-question: decompose and hop 1 are saved.
        dies = ScriptedReply(
            when=["Question: Where was Tomas Reyd born?"], reply="", error="model died", times=1
        )
        rules.insert(0, dies)
    return rules


def prism_rules() -> list[ScriptedReply]:
    """Chain: keeps Blue Harbor and Lena Marsh, adds Tomas Reyd, then converges; comparison:
    keeps nothing and answers wrong."""
    return [
        rule(
            DECOMPOSE,
            f"Question: {CHAIN_Q}",
            reply={"sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"]},
        ),
        rule(SELECTOR, f"Question: {CHAIN_Q}", "Kept so far: none yet", reply={"keep": [1, 2]}),
        rule(ADDER, f"Question: {CHAIN_Q}", "Kept so far: 1, 2\n", reply={"add": [3]}),
        rule(SELECTOR, f"Question: {CHAIN_Q}", "Kept so far: 1, 2, 3\n", reply={"keep": []}),
        rule(ADDER, f"Question: {CHAIN_Q}", "Kept so far: 1, 2, 3\n", reply={"add": []}),
        rule(ANSWER, f"Question: {CHAIN_Q}", reply={"answer": "Lisbon"}),
        rule(DECOMPOSE, f"Question: {COMPARE_Q}", reply={"sub_questions": [COMPARE_Q]}),
        rule(SELECTOR, f"Question: {COMPARE_Q}", reply={"keep": []}),
        rule(ADDER, f"Question: {COMPARE_Q}", reply={"add": []}),
        rule(ANSWER, f"Question: {COMPARE_Q}", reply={"answer": "Ivo Strand"}),
    ]


async def test_self_ask_eval_lines_tokens_and_causes(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    build_corpus(engine)
    svc, _, _ = make_services(engine, database_url, self_ask_rules())
    cli = peer_eval(questions, tmp_path / "runs", "--method", "self-ask", "--set", "k=1")

    run, outcome, summaries = await evaluate(cli, svc, None)

    assert (outcome.answered, outcome.failed) == (2, [])
    assert run.results == tmp_path / "runs" / "films" / "self-ask.jsonl"
    lines = lines_of(run.results)
    chain, compare = lines["2hop__chain"], lines["3hop__compare"]
    # The line's tokens are exactly the scripted usage of the run's calls (no judge ran).
    chain_tally = expected_tally([DECOMPOSE, ANSWER, ANSWER, FINDINGS])
    compare_tally = expected_tally([DECOMPOSE, ANSWER, FINDINGS])
    for line, tally in ((chain, chain_tally), (compare, compare_tally)):
        assert (line["input_tokens"], line["output_tokens"], line["calls"]) == tally
        assert line["tokens"] == tally[0] + tally[1]
        # Every call is in the ledger under the line's thread, and nothing else is.
        assert ledger_tally(engine, line["thread_id"]) == tally
        # Self-Ask reads no proposition graph: no indexing is billed.
        assert line["indexing_tokens"] == 0.0
    assert (chain["prediction"], chain["em"], compare["prediction"], compare["em"]) == (
        "Lisbon",
        1.0,
        "Ivo Strand",
        0.0,
    )
    # Shown passages: every passage any answer step saw, in first-seen order, with titles.
    answer_prompts = [p for p in prompts(svc.llm) if p.startswith(ANSWER)]
    chain_seen = list(dict.fromkeys(t for p in answer_prompts[:2] for t in shown_titles(p)))
    assert chain["attribution"]["shown"]["titles"] == chain_seen
    assert chain["attribution"]["shown"]["ids"] == chain["passages"]
    assert len(chain["passages"]) == len(chain_seen) >= 1
    # One sub-question with k=1 shows one passage: one of the two gold passages never came.
    assert compare["attribution"]["shown"]["titles"] == shown_titles(answer_prompts[2])
    assert (compare["attribution"]["cause"], compare["attribution"]["evidence_recall"]) == (
        "retrieval",
        0.5,
    )
    assert chain["attribution"]["cause"] == "correct"
    assert chain["settings"] == {
        "method": "self-ask",
        "model": "scripted",
        "self-ask": {"chat_model": None, "max_passage_chars": 1500, "prompt_chars": 0, "k": 1},
    }
    assert summaries[0].tokens == sum(t[0] + t[1] for t in (chain_tally, compare_tally))
    # The line's thread holds the self-ask run: `grasp show` and Studio open it.
    snapshot = await thread_values(svc, database_url, "self-ask", chain["thread_id"])
    assert (snapshot.values["final_answer"], snapshot.next) == ("Lisbon", ())
    assert snapshot.metadata["grasp_method"] == "self-ask"
    assert snapshot.values["sub_answers"] == ["Tomas Reyd", "Lisbon"]


async def test_prism_eval_scores_its_kept_sets(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    build_corpus(engine)
    svc, _, _ = make_services(engine, database_url, prism_rules())
    cli = peer_eval(questions, tmp_path / "runs", "--method", "prism")

    run, outcome, _ = await evaluate(cli, svc, None)

    assert (outcome.answered, outcome.failed) == (2, [])
    lines = lines_of(run.results)
    chain, compare = lines["2hop__chain"], lines["3hop__compare"]
    state = (await thread_values(svc, database_url, "prism", chain["thread_id"])).values
    ids = dict(zip(CHAIN_CANDIDATES, state["candidates"], strict=True))
    kept = ["Blue Harbor", "Lena Marsh", "Tomas Reyd"]
    # Hand-checked: 2 of the 3 kept passages are gold (precision 2/3); both gold passages kept.
    assert chain["kept"] == {
        "ids": [ids[t] for t in kept],
        "titles": kept,
        "precision": pytest.approx(2 / 3),
        "recall": 1.0,
    }
    assert chain["passages"] == [ids[t] for t in kept]
    assert chain["attribution"]["cause"] == "correct"
    kinds = [DECOMPOSE, SELECTOR, ADDER, SELECTOR, ADDER, ANSWER]
    assert (chain["input_tokens"], chain["output_tokens"], chain["calls"]) == expected_tally(kinds)
    assert ledger_tally(engine, chain["thread_id"]) == expected_tally(kinds)
    # Nothing kept: precision is undefined, recall 0, and the wrong answer is a retrieval loss.
    assert compare["kept"] == {"ids": [], "titles": [], "precision": None, "recall": 0.0}
    assert (compare["attribution"]["cause"], compare["passages"]) == ("retrieval", [])
    assert (compare["tokens"], compare["calls"]) == (
        sum(expected_tally([DECOMPOSE, SELECTOR, ADDER, ANSWER])[:2]),
        4,
    )
    # The summary averages each score where it is defined.
    summary = json.loads((run.results.parent / "prism.summary.json").read_text())
    assert summary["kept_retrieval"] == {
        "n": 2,
        "precision": pytest.approx(2 / 3),
        "recall": 0.5,
        "kept_per_question": 1.5,
    }

    # A changed PRISM setting is another run: its file is refused, in one line.
    other = peer_eval(questions, tmp_path / "runs", "--method", "prism", "--set", "max_rounds=2")
    with pytest.raises(SettingsChanged, match=r"prism\.max_rounds: 3 → 2"):
        await evaluate(other, svc, None)
    # An unknown setting and a --k the method has no use for fail before any question.
    for extra in (["--set", "k_hops=2"], ["--k", "3"]):
        bad = peer_eval(questions, tmp_path / "runs", "--method", "prism", *extra)
        with pytest.raises(ValueError, match="k_hops|no k setting"):
            await evaluate(bad, svc, None)


async def test_an_interrupted_peer_question_continues_from_its_checkpoint(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    build_corpus(engine)
    svc, _, _ = make_services(engine, database_url, self_ask_rules(crash=True))
    cli = peer_eval(
        questions, tmp_path / "runs", "--method", "self-ask", "--set", "k=1", "--limit", "1"
    )
    thread = "eval:self-ask:films:2hop__chain"

    run, outcome, _ = await evaluate(cli, svc, None)
    assert (outcome.answered, len(outcome.failed)) == (0, 1)
    assert "model died" in outcome.failed[0][1]
    stopped = await thread_values(svc, database_url, "self-ask", thread)
    assert (stopped.next, stopped.values["sub_answers"]) == (("ask_next",), ["Tomas Reyd"])

    _, outcome, _ = await evaluate(cli, svc, None)
    assert (outcome.answered, outcome.failed) == (1, [])
    line = lines_of(run.results)["2hop__chain"]
    # Decompose and hop 1 did not run again; the tally equals an uninterrupted run's.
    assert len([p for p in prompts(svc.llm) if p.startswith(DECOMPOSE)]) == 1
    hop_one = [p for p in prompts(svc.llm) if "Question: Who directed Blue Harbor?" in p]
    assert len(hop_one) == 1
    tally = expected_tally([DECOMPOSE, ANSWER, ANSWER, FINDINGS])
    assert (line["prediction"], line["input_tokens"], line["output_tokens"], line["calls"]) == (
        "Lisbon",
        *tally,
    )


async def test_the_report_puts_every_method_in_one_table(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    build_corpus(engine)
    svc, _, _ = make_services(engine, database_url, self_ask_rules() + prism_rules())
    for method in ("self-ask", "prism"):
        await evaluate(peer_eval(questions, tmp_path / "runs", "--method", method), svc, None)

    report = write_report(tmp_path / "runs" / "films")

    assert list(report.qa) == ["prism", "self-ask"]
    text = report.files[0].read_text()
    qa_table = text.split("## QA\n\n", 1)[1].split("\n\n", 1)[0]
    rows = [row.split(" | ")[0].lstrip("| ") for row in qa_table.splitlines()[2:]]
    assert rows == ["prism", "self-ask"]
    assert "| prism | 2hop | 1 |" in text and "| self-ask | 3hop | 1 |" in text
    assert "## Kept evidence (PRISM)" in text
    assert "| prism | 2 | 0.667 | 0.500 | 1.5 |" in text
    assert [p.name for p in report.files] == ["report.md", "accuracy_vs_tokens.png"]
    # The HTML eval page shows the same methods and the kept-set scores.
    html = render_eval_page(tmp_path / "runs" / "films")
    assert 'data-methods="2"' in html and "<h2>Kept evidence (PRISM)</h2>" in html
