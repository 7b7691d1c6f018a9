"""`python -m evals.reread`: a finished run's final answer asked again with changed settings,
from the run itself (not a later fork), scored, resumable; against the scripted films chain."""

import json
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine

from evals.reread import main as reread
from graphs.cli.main import main
from tests.fixtures.films import PAPER_VOTE_ARGS, READER, build_corpus, rule
from tests.fixtures.scripted_cli import calls, use_scripted_model
from tests.fixtures.steering import QUESTION, steering_rules


@pytest.fixture
def scripted_env(
    engine: Engine, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = [
        rule(READER, "Question: ", reply={"answer": "Lisbon, Portugal"}),
        *steering_rules(build_corpus(engine)),
    ]
    use_scripted_model(monkeypatch, database_url, tmp_path, rules)


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_reread_asks_only_the_final_answer_again_from_the_run_itself(
    scripted_env: None, engine: Engine, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"reread-{uuid.uuid4().hex[:8]}"
    assert (
        main(
            ["ask", QUESTION, "--corpus", "films", *PAPER_VOTE_ARGS, "--quiet", "--thread", thread]
        )
        == 0
    )
    made = calls(engine, thread)
    line = {
        "id": "q1",
        "question": QUESTION,
        "gold": ["Lisbon"],
        "thread_id": thread,
        "prediction": "Lisbon",
        "em": 1.0,
        "f1": 1.0,
        "tokens": 1951,
    }
    lines = tmp_path / "grasp.jsonl"
    lines.write_text(json.dumps(line) + "\n")
    capsys.readouterr()

    reader_out = tmp_path / "reader.jsonl"
    assert reread([str(lines), "--out", str(reader_out), "--set", "synthesis=reader"]) == 0
    (row,) = rows(reader_out)
    assert (row["prediction"], row["before"], row["em"], row["em_before"]) == (
        "Lisbon, Portugal",
        "Lisbon",
        0.0,
        1.0,
    )
    assert row["f1"] == pytest.approx(2 / 3)
    assert calls(engine, thread) == made + 1  # the reader only; plan and hops are the run's
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "1 questions: EM 1.000 → 0.000, F1 1.000 → 0.667, tokens 1,951 → " + (
        f"{row['tokens']:,}"
    )
    assert printed[1] == "  q1: 'Lisbon' (EM 1) → 'Lisbon, Portugal' (EM 0)"

    # Resumed: nothing is asked again.
    assert reread([str(lines), "--out", str(reader_out), "--set", "synthesis=reader"]) == 0
    assert calls(engine, thread) == made + 1 and len(rows(reader_out)) == 1

    # Without --set the run's own settings hold, not the reader the latest fork used.
    same_out = tmp_path / "same.jsonl"
    assert reread([str(lines), "--out", str(same_out)]) == 0
    (same,) = rows(same_out)
    assert (same["prediction"], same["em"]) == ("Lisbon", 1.0)
    assert calls(engine, thread) == made + 2


def test_reread_refuses_a_bad_setting_and_a_line_without_its_run(
    scripted_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = tmp_path / "grasp.jsonl"
    lines.write_text(
        json.dumps(
            {
                "id": "q",
                "gold": ["x"],
                "thread_id": "no-such-thread",
                "prediction": "x",
                "em": 1.0,
                "f1": 1.0,
                "tokens": 1,
            }
        )
        + "\n"
    )
    out = tmp_path / "out.jsonl"
    assert reread([str(lines), "--out", str(out), "--set", "no_such_setting=1"]) == 2
    assert capsys.readouterr().err.startswith("refused: ")
    assert reread([str(lines), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == "refused: no checkpoints for thread no-such-thread"
    assert reread([str(tmp_path / "missing.jsonl"), "--out", str(out)]) == 2
    assert "No such file" in capsys.readouterr().err
    lines.write_text(json.dumps({"id": "q", "gold": ["x"]}) + "\n")
    assert reread([str(lines), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == f"refused: a line of {lines} has no 'thread_id' field"
    assert not out.exists()
