"""`grasp ask --method` for a peer through the CLI: run, replay, refusals, `runs`, `show`, and a
kill/resume of a peer run in a real process."""

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from graphs.cli.main import main
from graphs.models.scripted_model import ScriptedReply
from graphs.runtime.run_history import describe
from store.corpora import corpus_id
from store.corpus_reads import corpus_passages
from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.films import build_corpus
from tests.fixtures.peers import ANSWER, DECOMPOSE, FINDINGS, rule

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Where was the director of Blue Harbor born?"


def self_ask_rules() -> list[ScriptedReply]:
    return [
        rule(
            DECOMPOSE,
            f"Question: {QUESTION}",
            reply={"sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"]},
            times=None,
        ),
        rule(
            ANSWER,
            "Question: Who directed Blue Harbor?",
            reply={"answer": "Tomas Reyd"},
            times=None,
        ),
        rule(
            ANSWER, "Question: Where was Tomas Reyd born?", reply={"answer": "Lisbon"}, times=None
        ),
        rule(FINDINGS, reply={"answer": "Lisbon"}, times=None),
    ]


def scripted_env(database_url: str, tmp_path: Path, rules: list[ScriptedReply]) -> dict[str, str]:
    script = tmp_path / "rules.json"
    script.write_text(json.dumps([r.model_dump() for r in rules]))
    return {
        "DATABASE_URL": database_url,
        "GRASP_CHAT_MODEL": f"scripted:{script}",
        "GRASP_EMBEDDER": "hash",
        "GRASP_LLM_CACHE": "0",  # a cached reply must not pass for a resumed step
        "GRASP_DATA_DIR": str(tmp_path / "data"),
    }


def ledger(engine: Engine, thread: str) -> Counter[tuple[str, int | None]]:
    with transaction(engine) as session:
        rows = session.execute(
            select(LlmCall.node, LlmCall.iteration).where(LlmCall.run_id == thread)
        ).all()
    return Counter((node, iteration) for node, iteration in rows)


ALL_CALLS = {("decompose", None), ("ask_next", 1), ("ask_next", 2), ("answer", None)}


def test_ask_a_peer_then_runs_and_show(
    engine: Engine,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    build_corpus(engine)
    for key, value in scripted_env(database_url, tmp_path, self_ask_rules()).items():
        monkeypatch.setenv(key, value)
    thread = f"peer-cli-{uuid.uuid4().hex[:8]}"
    ask = ["ask", QUESTION, "--corpus", "films", "--method", "self-ask", "--thread", thread]
    assert main([*ask, "--stream", "--set", "k=2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == [
        f"thread: {thread}",
        f"[start] question: {QUESTION}",
        "[decompose] 2 sub-questions: Who directed Blue Harbor? | Where was #1 born?",
        "[ask_next] Who directed Blue Harbor? → Tomas Reyd",
        "[ask_next] Where was Tomas Reyd born? → Lisbon",
    ]
    summary = out[out.index("[answer] answer: Lisbon") + 1 :]
    ids = {p.title: p.id for p in corpus_passages(engine, corpus_id(engine, "films"))}
    assert summary[:11] == [
        "answer: Lisbon [1] [2]",
        "sources:",  # each sub-answer cited from the passages Self-Ask read
        f"  [1] Blue Harbor (passage {ids['Blue Harbor']}, hop 1)",
        "      “Blue Harbor was directed by Tomas Reyd.”",
        f"  [2] Tomas Reyd (passage {ids['Tomas Reyd']}, hop 2)",
        "      “Tomas Reyd was born in Lisbon in 1950.”",
        "tokens: 1000 in / 36 out",
        "  answer: 90 in / 4 out, 1 call",
        "  ask_next: 800 in / 12 out, 2 calls",
        "  decompose: 110 in / 20 out, 1 call",
        "LLM calls: 4 (0 from cache)",
    ]
    assert summary[11].startswith("wall time: ")
    assert set(ledger(engine, thread)) == ALL_CALLS

    # Again on the thread: the stored answer, no call; the thread keeps its settings.
    assert main(ask) == 0
    again = capsys.readouterr().out.splitlines()
    assert again[1] == "note: the thread keeps its original settings {'k': 2}"
    assert again[2] == "this thread has already answered the question; no model is called"
    assert "answer: Lisbon [1] [2]" in again and "LLM calls: 4 (0 from cache)" in again
    assert sum(ledger(engine, thread).values()) == 4

    # The thread is bound to its method; GRASP flags are refused for a peer.
    assert main([*ask[:4], "--method", "prism", "--thread", thread]) == 2
    assert f"refused: thread {thread} was run by self-ask, not prism" in capsys.readouterr().err
    assert main([*ask[:6], "--planner", "off"]) == 2
    assert "refused: --planner is a GRASP setting" in capsys.readouterr().err

    assert main(["runs", "--limit", "50"]) == 0
    listing = capsys.readouterr().out.splitlines()
    row = next(i for i, line in enumerate(listing) if line.startswith(thread))
    assert listing[row].split("  ")[1] == "done"
    assert listing[row].endswith("  self-ask  1000/36 tokens, 4 calls")
    assert listing[row + 1 : row + 3] == [f"  question: {QUESTION}", "  answer: Lisbon"]

    assert main(["show", thread]) == 0
    history = capsys.readouterr().out.splitlines()
    assert history[0] == f"thread {thread}: 7 checkpoints · method self-ask"
    steps = [line.split("  |")[0].rstrip() for line in history[1:]]
    assert steps[1:6] == [
        f"step   1  start       question: {QUESTION}",
        "step   2  decompose   2 sub-questions: Who directed Blue Harbor? | Where was #1 born?",
        "step   3  ask_next    Who directed Blue Harbor? → Tomas Reyd",
        "step   4  ask_next    Where was Tomas Reyd born? → Lisbon",
        "step   5  answer      answer: Lisbon",
    ]
    assert history[-2].endswith("| so far 1000/36 tokens, 4 calls")
    assert history[-1] == "status: done"


def test_a_killed_peer_run_resumes_without_repeating_finished_calls(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    build_corpus(engine)
    rules = self_ask_rules()
    slow = next(r for r in rules if re.escape("Question: Where was Tomas Reyd born?") in r.when)
    slow.delay_s = 4.0  # the kill lands while the second sub-answer is in flight
    env = {**os.environ, **scripted_env(database_url, tmp_path, rules)}
    thread = f"peer-resume-{uuid.uuid4().hex[:8]}"
    command = [sys.executable, "-m", "graphs.cli", "ask", QUESTION, "--corpus", "films"]
    command += ["--method", "self-ask", "--thread", thread, "--set", "k=2"]

    with (tmp_path / "first.log").open("w") as log:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)
        deadline = time.time() + 90
        while ("ask_next", 1) not in ledger(engine, thread):
            assert process.poll() is None, (tmp_path / "first.log").read_text()
            assert time.time() < deadline, "the first sub-answer never came"
            time.sleep(0.2)
        time.sleep(1.5)  # the first sub-answer is checkpointed; the second call is sleeping
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert set(ledger(engine, thread)) == {("decompose", None), ("ask_next", 1)}

    finished = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    out = finished.stdout.splitlines()
    assert out[0] == f"thread: {thread}"
    assert "resuming at step 4 (next: ask_next)" in out
    assert "answer: Lisbon [1] [2]" in out
    # The tally in the checkpoints spans both processes.
    assert "tokens: 1000 in / 36 out" in out and "LLM calls: 4 (0 from cache)" in out
    calls = ledger(engine, thread)
    assert set(calls) == ALL_CALLS
    assert max(calls.values()) == 1, calls


def test_peer_steps_are_summarised_in_one_line() -> None:
    assert describe("prism", "gather", {"candidates": [4, 1, 3]}) == "3 candidates: #4, #1, #3"
    assert describe("prism", "select", {"round": 2, "kept": [4, 3]}) == (
        "round 2, selector: kept #4, #3"
    )
    assert describe("prism", "add", {"kept": []}) == "adder: kept (none)"
    assert describe("ircot", "think", {"step": 1, "query": "A was born in B.", "done": True}) == (
        'step 1: "A was born in B." (settled)'
    )
    assert describe("full-context", "read_context", {"passages": [1], "error": "too long"}) == (
        "error: too long"
    )
    assert describe("dense", "answer", {"final_answer": "Lisbon"}) == "answer: Lisbon"
    # GRASP's nodes keep their own summaries.
    assert describe("grasp", "synthesize", {"final_answer": "Lisbon"}) == "answer: Lisbon"
