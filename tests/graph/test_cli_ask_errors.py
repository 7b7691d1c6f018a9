"""`grasp ask` refuses bad input up front (one line, exit 2, no thread, nothing recorded), and
shows its progress by default."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from graphs.cli.main import main
from store.corpora import ensure_corpus
from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.films import PAPER_VOTE_ARGS, build_corpus, chain_rules

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Where was the director of Blue Harbor born?"


@pytest.fixture
def env_vars(
    engine: Engine, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """The films corpus (hash vectors), a scripted model, and one corpus of another embedder."""
    script = tmp_path / "rules.json"
    script.write_text(json.dumps([r.model_dump() for r in chain_rules(build_corpus(engine))]))
    ensure_corpus(engine, "gemini-made", "gemini-embedding-001")
    env = {
        "DATABASE_URL": database_url,
        "GRASP_CHAT_MODEL": f"scripted:{script}",
        "GRASP_EMBEDDER": "hash",
        "GRASP_LLM_CACHE": "0",
        "GRASP_DATA_DIR": str(tmp_path / "data"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return {**os.environ, **env}


def recorded(engine: Engine, thread: str, capsys: pytest.CaptureFixture[str]) -> bool:
    """Whether the thread left any checkpoint or ledger row."""
    with transaction(engine) as session:
        calls = session.execute(
            select(func.count()).select_from(LlmCall).where(LlmCall.run_id == thread)
        ).scalar_one()
    shown = main(["show", thread])
    capsys.readouterr()
    return bool(calls) or shown != 2


REFUSALS = {
    "empty question": (
        ["ask", "   ", "--corpus", "films"],
        'refused: the question is empty; ask something, e.g. grasp ask "Who …?" --corpus C',
    ),
    "unknown corpus": (
        ["ask", QUESTION, "--corpus", "flims"],
        "refused: no corpus named 'flims'; index one with `grasp index PATH --corpus flims`",
    ),
    "another embedder": (
        ["ask", QUESTION, "--corpus", "gemini-made"],
        "refused: corpus 'gemini-made' was indexed with embedder gemini-embedding-001, but "
        "GRASP_EMBEDDER gives hash-384: its vectors cannot be compared; set GRASP_EMBEDDER to match",
    ),
    "another embedder, peer method": (
        ["ask", QUESTION, "--corpus", "gemini-made", "--method", "self-ask"],
        "refused: corpus 'gemini-made' was indexed with embedder gemini-embedding-001, but "
        "GRASP_EMBEDDER gives hash-384: its vectors cannot be compared; set GRASP_EMBEDDER to match",
    ),
    "corpus as a setting": (
        ["ask", QUESTION, "--corpus", "films", "--set", "corpus=x"],
        "refused: --set corpus=… is not a setting: name the corpus with --corpus",
    ),
    "ill-typed setting": (
        ["ask", QUESTION, "--corpus", "films", "--set", "max_iterations=abc"],
        "refused: --set max_iterations=abc: max_iterations takes a whole number",
    ),
    "ill-typed float setting": (
        ["ask", QUESTION, "--corpus", "films", "--set", "lexical_weight=heavy"],
        "refused: --set lexical_weight=heavy: lexical_weight takes a number",
    ),
}


def test_bad_questions_corpora_and_settings_are_refused_before_any_run(
    env_vars: dict[str, str], engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two real commands side by side: the exit code and the only line a user sees.
    picked = ["empty question", "another embedder"]
    threads = {name: f"refused-{uuid.uuid4().hex[:8]}" for name in REFUSALS}
    running = {
        name: subprocess.Popen(
            [sys.executable, "-m", "graphs.cli", *REFUSALS[name][0], "--thread", threads[name]],
            cwd=REPO,
            env=env_vars,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in picked
    }
    for name, process in running.items():
        out, err = process.communicate(timeout=120)
        assert process.returncode == 2, err
        assert out == ""  # no thread line: there is no run to resume
        assert err.splitlines() == [REFUSALS[name][1]]
    # Every case in this process (the same handler, no interpreter start each).
    for name, (command, line) in REFUSALS.items():
        assert main([*command, "--thread", threads[name]]) == 2, name
        captured = capsys.readouterr()
        assert captured.out == "", name
        assert captured.err.splitlines() == [line], name
    for name, thread in threads.items():
        assert not recorded(engine, thread, capsys), name


def test_progress_shows_by_default_and_quiet_hides_it(
    env_vars: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["ask", QUESTION, "--corpus", "films", *PAPER_VOTE_ARGS]
    assert main([*command, "--thread", f"progress-{uuid.uuid4().hex[:8]}"]) == 0
    # Each node as it finishes (the running total of tokens after it cut off), before the final
    # report, without --stream.
    out = [line.split("  | so far ")[0] for line in capsys.readouterr().out.splitlines()]
    assert "  [sq1 · select_entities] entities chosen: Blue Harbor" in out
    assert "[synthesize] answer: Lisbon" in out
    assert out.index("[synthesize] answer: Lisbon") < out.index("answer: Lisbon [1] [2]")

    assert main([*command, "--quiet", "--thread", f"quiet-{uuid.uuid4().hex[:8]}"]) == 0
    quiet = capsys.readouterr().out.splitlines()
    assert "  2. Where was #1 born?  (needs #1)" in quiet  # the plan still shows
    # No node's line ("[plan] …", "  [sq1 · search] …"); the numbered sources ("  [1] …") stay.
    assert not any(re.match(r" {0,2}\[[a-z]", line) for line in quiet)
    assert "answer: Lisbon [1] [2]" in quiet and "  [1] Blue Harbor" in " ".join(quiet)
