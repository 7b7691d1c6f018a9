"""GRASP eval lines carry their failure attribution and settings; a run's settings are its identity."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from sqlalchemy import Engine

from evals.reports import write_report
from evals.results import SettingsChanged, write_jsonl
from graphs.agent.graph import build_grasp_graph
from graphs.runtime.checkpoints import open_checkpointer
from nodes.llm.client import LlmClient
from tests.fixtures.eval_films import evaluate, make_services, prompts, unjudged_eval
from tests.fixtures.films import READER, SYNTHESIZE, build_corpus, chain_rules, rule


def only_line(path: Path) -> dict[str, Any]:
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    line: dict[str, Any] = json.loads(lines[0])
    return line


async def test_a_grasp_line_says_which_step_lost_the_question(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    ids = build_corpus(engine)
    # Both hops answer right, then the synthesis pads the answer: EM 0, a synthesis failure.
    padded = rule(
        SYNTHESIZE,
        "2. Where was Tomas Reyd born? → Lisbon",
        reply={"answer": "Lisbon, Portugal", "justification": "He was born in Lisbon."},
    )
    svc, _, _ = make_services(engine, database_url, [padded, *chain_rules(ids)])
    cli = unjudged_eval(questions, tmp_path / "runs", "--limit", "1")

    run, outcome, _ = await evaluate(cli, svc, None)

    assert outcome.failed == []
    line = only_line(run.results)
    assert (line["prediction"], line["em"]) == ("Lisbon, Portugal", 0.0)
    facts = line["attribution"]
    assert (facts["cause"], facts["evidence_recall"]) == ("synthesis", 1.0)
    # The gold hops, located in the store (passages 1 and 2), each shown and answered.
    assert [
        (g["hop"], g["passage_id"], g["title"], g["depends_on"], g["seen"], g["answered_by"])
        for g in facts["gold"]
    ] == [(1, 1, "Blue Harbor", [], True, [1]), (2, 2, "Tomas Reyd", [1], True, [2])]
    first, second = facts["sub_questions"]
    assert (first["text"], first["depends_on"], first["answer"]) == (
        "Who directed Blue Harbor?",
        [],
        "Tomas Reyd",
    )
    assert (second["text"], second["resolved"], second["depends_on"], second["answer"]) == (
        "Where was #1 born?",
        "Where was Tomas Reyd born?",
        [1],
        "Lisbon",
    )
    # Per round, read back from the sub-agents' checkpoints: hop 1 saw Blue Harbor's passage;
    # hop 2 chose no entity in round 1 (nothing shown) and found Tomas Reyd's in round 2.
    assert [(r["iteration"], r["ids"], r["titles"], r["decision"]) for r in first["rounds"]] == [
        (1, [1], ["Blue Harbor"], "DONE")
    ]
    rounds = [(r["iteration"], r["entities"], r["decision"]) for r in second["rounds"]]
    assert rounds == [(1, [], "QUERY_AGAIN"), (2, ["Tomas Reyd"], "DONE")]
    assert second["rounds"][0]["ids"] == []
    shown = dict(zip(second["rounds"][1]["ids"], second["rounds"][1]["titles"], strict=True))
    assert shown[2] == "Tomas Reyd"
    assert (first["evidence_recall"], second["evidence_recall"]) == (0.5, 1.0)
    # Evidence stays out of the parent's state: the line's facts came from the checkpoints.
    async with open_checkpointer(database_url) as saver:
        config: RunnableConfig = {"configurable": {"thread_id": line["thread_id"]}}
        parent = (await build_grasp_graph(svc, saver).aget_state(config)).values
    assert "evidence" not in parent and parent["answers"] == {1: "Tomas Reyd", 2: "Lisbon"}

    report = write_report(run.results.parent, plots=False)
    assert report.causes["grasp"].counts["synthesis"] == 1
    table = run.results.with_name("report.md").read_text()
    assert "| grasp | 1 | 0 (0%) | 0 (0%) | 0 (0%) | 0 (0%) | 1 (100%) | 0 (0%) | 1.000 |" in table


async def test_a_rerun_with_other_settings_is_refused_not_mixed(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    ids = build_corpus(engine)
    svc, _, _ = make_services(engine, database_url, chain_rules(ids))
    out = tmp_path / "runs"
    run, _, _ = await evaluate(unjudged_eval(questions, out, "--limit", "1"), svc, None)
    first = only_line(run.results)
    recorded = first["settings"]
    assert (recorded["method"], recorded["model"], recorded["grasp"]["hit_weight"]) == (
        "grasp",
        "scripted",
        0.0,
    )
    calls = len(prompts(svc.llm))

    # Other settings on the same results file: one clear refusal, no question answered.
    changed = unjudged_eval(questions, out, "--limit", "1", "--set", "max_iterations=2")
    with pytest.raises(SettingsChanged) as refused:
        await evaluate(changed, svc, None)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{run.results} holds answers made with other settings (")
    assert "grasp.max_iterations: 3 → 2" in message and "--name" in message
    assert len(prompts(svc.llm)) == calls and len(run.results.read_text().splitlines()) == 1

    # The same settings again resume as before; a new name is a new identity, answered afresh.
    _, again, _ = await evaluate(unjudged_eval(questions, out, "--limit", "1"), svc, None)
    assert (again.answered, again.skipped) == (0, 1)
    named = unjudged_eval(
        questions, out, "--limit", "1", "--set", "max_iterations=2", "--name", "grasp-2rounds"
    )
    other, fresh, _ = await evaluate(named, svc, None)
    assert (fresh.answered, other.results.name) == (1, "grasp-2rounds.jsonl")
    assert only_line(other.results)["settings"]["grasp"]["max_iterations"] == 2

    # Lines that recorded no settings (an older run) are not taken for this run's either.
    write_jsonl(run.results, [{k: v for k, v in first.items() if k != "settings"}])
    with pytest.raises(SettingsChanged, match="1 answer\\(s\\) that do not record their settings"):
        await evaluate(unjudged_eval(questions, out, "--limit", "1"), svc, None)


async def test_the_settings_line_records_what_the_profile_settled_on_the_local_model(
    engine: Engine, database_url: str, questions: Path, tmp_path: Path
) -> None:
    ids = build_corpus(engine)
    reader = rule(READER, "Question: ", reply={"answer": "Lisbon"})
    svc, _, _ = make_services(engine, database_url, [reader, *chain_rules(ids)])
    local = LlmClient(model=svc.llm.model, model_name="local:scripted", use_cache=False)
    run, _, _ = await evaluate(
        unjudged_eval(questions, tmp_path / "runs", "--limit", "1"),
        replace(svc, llm=local, extractor_llm=local),
        None,
    )
    line = only_line(run.results)
    grasp = line["settings"]["grasp"]
    # The line says what ran (auto resolved to the small profile and its values), not what was asked.
    assert (line["settings"]["model"], grasp["profile"]) == ("local:scripted", "small")
    assert (grasp["entity_selection"], grasp["synthesis"]) == ("off", "reader")
    assert line["prediction"] == "Lisbon"
