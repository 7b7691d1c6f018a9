"""The README's first run, exactly as a new user types it: the shipped musique-5q corpus indexed
with spaCy, then the two-hop Maiden Japan question answered by the real local model (seeded)."""

import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from graphs.cli.main import main
from store.engine import transaction
from store.ledger_models import LlmCall

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Where did the band form that made the live album Maiden Japan?"


def test_the_readme_first_run_answers_through_a_linked_two_hop_plan(
    engine: Engine,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("GRASP_DATA_DIR", str(tmp_path / "data"))
    for name in ("GRASP_CHAT_MODEL", "GRASP_EMBEDDER", "GOOGLE_API_KEY", "GRASP_LLM_CACHE"):
        monkeypatch.delenv(name, raising=False)  # the defaults a new user gets
    corpus = str(REPO / "examples" / "musique-5q" / "corpus.json")

    assert main(["index", corpus, "--corpus", "musique-5q", "--extractor", "spacy"]) == 0
    capsys.readouterr()
    assert main(["ask", QUESTION, "--corpus", "musique-5q"]) == 0
    out = capsys.readouterr().out
    print(out)

    lines = out.splitlines()
    steps = [line for line in lines if line.startswith("  1. ") or line.startswith("  2. ")]
    assert len(steps) == 2 and "Maiden Japan" in steps[0]
    assert "#1" in steps[1] and steps[1].endswith("(needs #1)")
    answers = [line.removeprefix("answer: ") for line in lines if line.startswith("answer: ")]
    assert len(answers) == 1
    answer = re.sub(r"( \[\d+\])+$", "", answers[0])
    marks = answers[0][len(answer) :]
    assert answer.split(",")[0] == "Leyton"  # the reader may add "East London"
    # Its sources are listed under it, one per [n] mark.
    assert marks and "sources:" in lines
    assert len(re.findall(r"\[\d+\]", marks)) == sum(
        bool(re.match(r"  \[\d+\] ", line)) for line in lines
    )
    thread = lines[0].removeprefix("thread: ")
    assert lines[-1] == f"see the run: grasp view {thread} --open"
    with transaction(engine) as session:
        calls = session.execute(
            select(func.count()).select_from(LlmCall).where(LlmCall.run_id == thread)
        ).scalar_one()
    assert f"LLM calls: {calls} (0 from cache)" in lines  # ledger = the run's own tally
