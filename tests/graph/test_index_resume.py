"""Kill the real `grasp index` process mid-way, run it again, and check nothing is duplicated."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import Engine, func, select

from store.engine import transaction
from store.models import Passage, Proposition
from tests.fixtures.data import SHARED_DATA
from tests.fixtures.indexing import DEISSEROTH, EAGLEMAN, SUDHOF, single

REPO = Path(__file__).resolve().parents[2]


def counts(engine: Engine) -> tuple[int, int]:
    with transaction(engine) as session:
        done = session.execute(select(func.count()).where(Passage.status == "done")).scalar_one()
        props = session.execute(select(func.count()).select_from(Proposition)).scalar_one()
    return int(done), int(props)


def test_killed_indexer_resumes_without_duplicates(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    rules = [
        single("Thomas C. Sudhof", SUDHOF, delay_s=0.5),
        single("David Eagleman", EAGLEMAN, delay_s=4.0),
        single("Karl Deisseroth", DEISSEROTH, delay_s=4.0),
    ]
    script = tmp_path / "rules.json"
    script.write_text(json.dumps([r.model_dump() for r in rules]))
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "GRASP_CHAT_MODEL": f"scripted:{script}",
        "GRASP_EMBEDDER": "hash",
        "GRASP_DATA_DIR": str(tmp_path / "data"),
    }
    command = [
        sys.executable,
        "-m",
        "graphs.cli",
        "index",
        str(SHARED_DATA / "sample_corpus.json"),
        "--corpus",
        "sample",
        "--extractor",
        "llm",
        "--batch-size",
        "1",
        "--concurrency",
        "1",
    ]
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    deadline = time.time() + 60
    while counts(engine)[0] < 1 and time.time() < deadline and process.poll() is None:
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done, props = counts(engine)
    assert (done, props) == (1, 3)  # only Sudhof's batch made it before the kill

    finished = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert counts(engine) == (3, 6)
    assert "3 (3 done, 0 failed, 0 pending)" in finished.stdout
