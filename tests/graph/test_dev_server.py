"""`langgraph dev` loads langgraph.json offline, checkpoints in PostgreSQL and answers over HTTP."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, func, select, text

from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules

REPO = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).parent / "langgraph"
QUESTION = "Where was the director of Blue Harbor born?"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def dev_server(engine: Engine, database_url: str, tmp_path: Path) -> Iterator[httpx.Client]:
    """A `langgraph dev` server on a free port with a scripted model; stopped afterwards."""
    script = tmp_path / "rules.json"
    script.write_text(json.dumps([r.model_dump() for r in chain_rules(build_corpus(engine))]))
    port = free_port()
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "DATABASE_URL": database_url,
        "GRASP_CHAT_MODEL": f"scripted:{script}",
        "GRASP_EMBEDDER": "hash",
        "GRASP_LLM_CACHE": "0",
        "GRASP_DATA_DIR": str(tmp_path / "data"),
        "GRASP_AUTH": "off",  # one local user; tests/graph/test_served_users.py covers tokens
    }
    log_path = tmp_path / "server.log"
    command = [str(LANGGRAPH), "dev", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--no-browser", "--no-reload"]
    with log_path.open("w") as log:
        # Its own session, so the server and anything it spawned stop together.
        server = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=log, stderr=log, start_new_session=True
        )
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    try:
        deadline = time.time() + 90
        while True:
            assert server.poll() is None, log_path.read_text()[-3000:]
            assert time.time() < deadline, "no /ok in 90 s:\n" + log_path.read_text()[-3000:]
            try:
                if client.get("/ok").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        yield client
    finally:
        client.close()
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_a_run_through_the_http_api_answers(dev_server: httpx.Client, engine: Engine) -> None:
    # The search returns 10 assistants unless told otherwise; langgraph.json exports more graphs.
    found = dev_server.post("/assistants/search", json={"limit": 100}).json()
    graphs = {a["graph_id"] for a in found}
    assert {"grasp", "index", "prism", "ircot_ppr", "self_ask", "full_context"} <= graphs

    thread = dev_server.post("/threads", json={}).json()["thread_id"]
    response = dev_server.post(
        f"/threads/{thread}/runs/wait",
        json={
            "assistant_id": "grasp",
            "input": {"question": QUESTION},
            "context": {"corpus": "films", **PAPER_VOTE},
        },
    )
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["final_answer"] == "Lisbon"
    assert result["answers"] == {"1": "Tomas Reyd", "2": "Lisbon"}  # JSON keys are strings
    assert (result["tokens"]["input_tokens"], result["tokens"]["calls"]) == (1770, 10)

    # The server's checkpoints are in PostgreSQL (graphs.runtime.checkpoints.dev_checkpointer), not memory.
    with engine.connect() as conn:
        stored = conn.execute(
            select(func.count())
            .select_from(text("checkpoints"))
            .where(text("thread_id = :thread AND checkpoint_ns = ''"))
            .params(thread=thread)
        ).scalar_one()
    assert stored == 9
