"""`grasp ask` / `runs` / `show` in-process on a finished thread, and alembic beside the checkpointer."""

import asyncio
import uuid
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Engine, text

from graphs.cli.main import main
from graphs.runtime.checkpoints import CHECKPOINT_TABLES, open_checkpointer
from store.corpora import corpus_id
from store.corpus_reads import corpus_passages
from store.engine import alembic_config
from tests.fixtures.films import PAPER_VOTE_ARGS, build_corpus, chain_rules
from tests.fixtures.scripted_cli import calls, use_scripted_model

QUESTION = "Where was the director of Blue Harbor born?"


@pytest.fixture
def scripted_env(
    engine: Engine, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_scripted_model(monkeypatch, database_url, tmp_path, chain_rules(build_corpus(engine)))


def test_ask_then_runs_and_show(
    scripted_env: None, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"cli-{uuid.uuid4().hex[:8]}"
    assert (
        main(
            ["ask", QUESTION, "--corpus", "films", "--thread", thread, "--stream", *PAPER_VOTE_ARGS]
        )
        == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == [
        f"thread: {thread}",
        "plan: Find who directed Blue Harbor, then where that person was born.",
        "  1. Who directed Blue Harbor?",
        "  2. Where was #1 born?  (needs #1)",
    ]
    # A line of a node that called the model ends with the run's running total.
    selected = "  [sq2 · select_entities] entities chosen: Tomas Reyd"
    assert f"{selected}  | so far 1390/144 tokens, 8 calls" in out
    assert "[synthesize] answer: Lisbon  | so far 1770/181 tokens, 10 calls" in out
    sq2 = out.index("sub-agent sq2: Where was Tomas Reyd born?")
    assert out[sq2 : sq2 + 10] == [
        "sub-agent sq2: Where was Tomas Reyd born?",
        '  round 1: search "Tomas Reyd was born somewhere." keywords [Tomas Reyd, born]',
        "    entities chosen: (none)",
        "    passages: (none)",
        "    decision: QUERY_AGAIN",
        '  round 2: search "Tomas Reyd was born in a city." keywords [Tomas Reyd, birthplace]',
        "    entities chosen: Tomas Reyd",
        "    passages: Tomas Reyd, Blue Harbor",
        "    decision: DONE → Lisbon",
        "  cost: 820/81 tokens, 5 calls",
    ]
    summary = out[out.index("answer: Lisbon [1] [2]") :]
    ids = {p.title: p.id for p in corpus_passages(engine, corpus_id(engine, "films"))}
    assert summary[:14] == [
        "answer: Lisbon [1] [2]",
        "justification: Tomas Reyd directed Blue Harbor and was born in Lisbon.",
        "sources:",
        f"  [1] Blue Harbor (passage {ids['Blue Harbor']}, hop 1, round 1)",
        "      “Blue Harbor was directed by Tomas Reyd.”",
        f"  [2] Tomas Reyd (passage {ids['Tomas Reyd']}, hop 2, round 2)",
        "      “Tomas Reyd was born in Lisbon in 1950.”",
        "tokens: 1770 in / 181 out",
        "  evaluate: 600 in / 75 out, 3 calls",
        "  plan: 300 in / 40 out, 1 call",
        "  rewrite: 240 in / 30 out, 2 calls",
        "  select_entities: 450 in / 24 out, 3 calls",
        "  synthesize: 180 in / 12 out, 1 call",
        "LLM calls: 10 (0 from cache)",
    ]
    assert summary[14].startswith("wall time: ")
    assert summary[15] == f"see the run: grasp view {thread} --open"
    assert calls(engine, thread) == 10

    # Asked again on the same thread: the stored result, and not one more model call.
    assert main(["ask", QUESTION, "--corpus", "films", "--thread", thread, *PAPER_VOTE_ARGS]) == 0
    again = capsys.readouterr().out.splitlines()
    assert again[1] == "this thread has already answered the question; no model is called"
    assert "answer: Lisbon [1] [2]" in again and "LLM calls: 10 (0 from cache)" in again
    assert calls(engine, thread) == 10

    # Another question on the thread is refused before anything runs.
    assert main(["ask", "Who is Ivo Strand?", "--corpus", "films", "--thread", thread]) == 2
    refused = capsys.readouterr()
    assert f"refused: thread {thread} belongs to another question" in refused.err

    assert main(["runs", "--limit", "50"]) == 0
    listing = capsys.readouterr().out.splitlines()
    row = next(i for i, line in enumerate(listing) if line.startswith(thread))
    assert listing[row].split("  ")[1] == "done"
    assert listing[row].endswith("1770/181 tokens, 10 calls")
    assert listing[row + 1 : row + 3] == [f"  question: {QUESTION}", "  answer: Lisbon"]

    assert main(["show", thread]) == 0
    history = capsys.readouterr().out.splitlines()
    assert history[0] == f"thread {thread}: 9 checkpoints"
    steps = [line.split("  |")[0].rstrip() for line in history[1:]]
    assert steps[:3] == [
        f"step   0  __start__   question: {QUESTION}",
        "step   1  plan        2 sub-questions: Find who directed Blue Harbor, then where that "
        "person was born.",
        "step   2  schedule    scheduled the next step",
    ]
    assert "step   3  sub_agent   sq1 → Tomas Reyd" in steps
    assert "           sq1 · select_entities entities chosen: Blue Harbor" in steps
    assert (
        '           sq2 · evaluate        QUERY_AGAIN: next search "Tomas Reyd was born in a city."'
        in steps
    )
    assert history[-2] == "step   7  synthesize  answer: Lisbon  | so far 1770/181 tokens, 10 calls"
    assert history[-1] == "status: done"


def test_bad_settings_and_unknown_threads_are_refused(
    scripted_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", QUESTION, "--corpus", "films", "--set", "max_iteration=2"]) == 1
    assert "unknown GRASP settings ['max_iteration']" in capsys.readouterr().err
    assert main(["show", "no-such-thread"]) == 2
    assert "refused: no checkpoints for thread no-such-thread" in capsys.readouterr().err


def test_alembic_sees_no_drift_beside_the_checkpoint_tables(
    engine: Engine, database_url: str
) -> None:
    async def set_up() -> None:
        async with open_checkpointer(database_url) as saver:
            await saver.setup()  # again, even if this process did it already

    asyncio.run(set_up())
    with engine.connect() as conn:
        tables = set(conn.execute(text("SELECT tablename FROM pg_tables")).scalars())
    assert tables >= CHECKPOINT_TABLES
    command.check(alembic_config(database_url))  # raises AutogenerateDiffsDetected on drift
