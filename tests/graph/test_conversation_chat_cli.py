"""`grasp chat`: two turns, resume and show, refusals, an interrupted turn finished on resume."""

import io
import json
import re
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine

from graphs.cli.main import main
from store.corpora import corpus_id
from store.corpus_reads import corpus_passages
from tests.fixtures.films import PAPER_VOTE_ARGS, build_corpus
from tests.fixtures.scripted_cli import use_scripted_model
from tests.graph.conversation_script import FIRST, FOLLOW_UP, conversation_rules


@pytest.fixture
def chat_env(
    engine: Engine, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_scripted_model(
        monkeypatch, database_url, tmp_path, conversation_rules(build_corpus(engine))
    )


def chat(monkeypatch: pytest.MonkeyPatch, typed: str, *args: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    return main(["chat", "--corpus", "films", *PAPER_VOTE_ARGS, *args])


def test_grasp_chat_two_turns_then_resume_and_show(
    chat_env: None,
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    thread = f"chat-{uuid.uuid4().hex[:8]}"
    ids = {p.title: p.id for p in corpus_passages(engine, corpus_id(engine, "films"))}
    assert (
        chat(monkeypatch, f"{FIRST}\n\n{FOLLOW_UP}\n/quit\nnever asked\n", "--thread", thread) == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"thread: {thread}",
        f"you> {FIRST}",
        f"hop 1 of 1: {FIRST}",
        out[3],  # "  reading N passages": the count is the retrieval's
        "  → Tomas Reyd",
        "answer: Tomas Reyd [1]",
        "why: He directed it.",
        "sources:",
        f"  [1] Blue Harbor (passage {ids['Blue Harbor']}, hop 1, round 1)",
        "      “Blue Harbor was directed by Tomas Reyd.”",
        "tokens: this turn 950/100 tokens, 5 calls; conversation 950/100 tokens, 5 calls",
        f"you> {FOLLOW_UP}",
        "hop 1 of 1: Where was Tomas Reyd born?",
        out[13],
        "  → Lisbon",
        "answer: Lisbon [1]",
        "why: Tomas Reyd was born in Lisbon.",
        "sources:",
        f"  [1] Tomas Reyd (passage {ids['Tomas Reyd']}, hop 1, round 1)",
        "      “Tomas Reyd was born in Lisbon in 1950.”",
        "tokens: this turn 950/100 tokens, 5 calls; conversation 1900/200 tokens, 10 calls",
    ]
    for reading in (out[3], out[13]):
        assert re.fullmatch(r"  reading (1 passage|[02-9]\d* passages)", reading)

    assert chat(monkeypatch, "/help\n/new\n", "--thread", thread) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:6] == [
        f"thread: {thread}",
        f"[1] you: {FIRST}",
        "[1] grasp: Tomas Reyd",
        f"[2] you: {FOLLOW_UP}",
        "[2] grasp: Lisbon",
        "commands: /new (a fresh thread), /quit",
    ]
    assert out[6].startswith("thread: ") and out[6] != f"thread: {thread}" and len(out) == 7

    assert main(["show", thread]) == 0
    shown = capsys.readouterr().out.splitlines()
    headers = [line for line in shown if line.startswith("turn ")]
    assert headers == [f"turn 1: {FIRST}", f"turn 2: {FOLLOW_UP}"]
    assert shown.index(headers[0]) < shown.index(headers[1])
    assert shown[-4:] == [
        "conversation: 2 turns, 1900/200 tokens, 10 calls",
        f"  1. {FIRST} → Tomas Reyd  (950/100 tokens, 5 calls)",
        f"  2. {FOLLOW_UP} → Lisbon  (950/100 tokens, 5 calls)",
        "status: done",
    ]


def test_grasp_chat_refuses_another_corpus_and_bad_settings(
    chat_env: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert chat(monkeypatch, "", "--set", "history_turns=-1") == 2
    assert "refused: history_turns must not be negative, not -1" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["chat", "--corpus", "no-such-corpus"]) == 2
    assert "refused:" in capsys.readouterr().err


def test_grasp_chat_finishes_an_interrupted_turn_on_resume(
    chat_env: None,
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rules = conversation_rules(build_corpus(engine))
    failing = rules[4].model_copy(update={"error": "the model went away", "times": 1})
    script = tmp_path / "failing.json"
    script.write_text(json.dumps([r.model_dump() for r in [failing, *rules]]))
    monkeypatch.setenv("GRASP_CHAT_MODEL", f"scripted:{script}")
    thread = f"chat-{uuid.uuid4().hex[:8]}"

    assert chat(monkeypatch, f"{FIRST}\n{FOLLOW_UP}\nnever asked\n", "--thread", thread) == 1
    captured = capsys.readouterr()
    assert "answer: Tomas Reyd [1]" in captured.out and "answer: Lisbon" not in captured.out
    err = " ".join(captured.err.split())
    assert "the turn stopped: LlmCallError:" in err and "the model went away" in err
    assert err.endswith(f"continue it with: grasp chat --corpus films --thread {thread}")

    assert chat(monkeypatch, "", "--thread", thread) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == [
        f"thread: {thread}",
        f"[1] you: {FIRST}",
        "[1] grasp: Tomas Reyd",
        f"the last turn was interrupted; finishing it: {FOLLOW_UP}",
    ]
    # It went on from its checkpoint: only the synthesis was left to do.
    assert out[4:] == [
        "answer: Lisbon [1]",
        "why: Tomas Reyd was born in Lisbon.",
        "sources:",
        out[7],  # "  [1] Tomas Reyd (passage …, hop 1, round 1)"
        "      “Tomas Reyd was born in Lisbon in 1950.”",
        "tokens: this turn 950/100 tokens, 5 calls; conversation 1900/200 tokens, 10 calls",
    ]
