"""Kill a real `grasp ask` mid-run, re-run it on the same thread, and check no finished LLM call
is made twice (the ledger, not the cache, is the witness: the cache is off)."""

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

from sqlalchemy import Engine, select

from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.films import PAPER_VOTE_ARGS, build_corpus, chain_rules

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Where was the director of Blue Harbor born?"
# Every call the uninterrupted run makes, as (node, sub-agent, iteration).
ALL_CALLS = {
    ("plan", None, None),
    ("rewrite", "sq1", 1),
    ("select_entities", "sq1", 1),
    ("evaluate", "sq1", 1),
    ("rewrite", "sq2", 1),
    ("select_entities", "sq2", 1),
    ("evaluate", "sq2", 1),
    ("select_entities", "sq2", 2),
    ("evaluate", "sq2", 2),
    ("synthesize", None, None),
}


def ledger(engine: Engine, thread: str) -> Counter[tuple[str, str | None, int | None]]:
    with transaction(engine) as session:
        rows = session.execute(
            select(LlmCall.node, LlmCall.agent_id, LlmCall.iteration).where(
                LlmCall.run_id == thread
            )
        ).all()
    return Counter((node, agent, iteration) for node, agent, iteration in rows)


def test_a_killed_ask_resumes_without_repeating_finished_calls(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    rules = chain_rules(build_corpus(engine))
    # sq2's first entity selection:
    slow = next(
        r for r in rules if re.escape("Looking for: Tomas Reyd was born somewhere.") in r.when
    )
    slow.delay_s = 4.0  # the kill lands while this call is in flight
    script = tmp_path / "rules.json"
    script.write_text(json.dumps([r.model_dump() for r in rules]))
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "GRASP_CHAT_MODEL": f"scripted:{script}",
        "GRASP_EMBEDDER": "hash",
        "GRASP_LLM_CACHE": "0",  # a cached reply must not pass for a resumed step
        "GRASP_DATA_DIR": str(tmp_path / "data"),
    }
    thread = f"resume-{uuid.uuid4().hex[:8]}"
    command = [sys.executable, "-m", "graphs.cli", "ask", QUESTION]
    command += ["--corpus", "films", "--thread", thread, *PAPER_VOTE_ARGS]

    with (tmp_path / "first.log").open("w") as log:
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)
        deadline = time.time() + 90
        while ("rewrite", "sq2", 1) not in ledger(engine, thread):
            assert process.poll() is None, (tmp_path / "first.log").read_text()
            assert time.time() < deadline, "the first sub-agent never finished"
            time.sleep(0.2)
        time.sleep(1.5)  # sq2's rewrite is checkpointed; its selection call is sleeping
        process.send_signal(signal.SIGKILL)
        process.wait()
    before = ledger(engine, thread)
    assert set(before) == {
        ("plan", None, None),
        ("rewrite", "sq1", 1),
        ("select_entities", "sq1", 1),
        ("evaluate", "sq1", 1),
        ("rewrite", "sq2", 1),
    }

    finished = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    out = finished.stdout
    assert out.splitlines()[0] == f"thread: {thread}"
    assert "resuming at step 5 (next: sub_agent)" in out
    assert "answer: Lisbon" in out
    # The tally in the checkpoints spans both processes: the same as an uninterrupted run.
    assert "tokens: 1770 in / 181 out" in out
    assert "LLM calls: 10 (0 from cache)" in out
    assert (
        '  round 2: search "Tomas Reyd was born in a city." keywords [Tomas Reyd, birthplace]'
        in out
    )

    calls = ledger(engine, thread)
    assert set(calls) == ALL_CALLS
    assert max(calls.values()) == 1, calls  # nothing that had finished was asked again
    assert calls[("plan", None, None)] == 1
