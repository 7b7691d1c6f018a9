"""`grasp ask --review` (the plan edited in $EDITOR, a broken edit refused), `grasp fork` and the
branches `grasp show` prints, in-process against the scripted films chain."""

import io
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from graphs.cli.main import main
from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.films import PAPER_VOTE_ARGS, build_corpus
from tests.fixtures.scripted_cli import use_scripted_model
from tests.fixtures.steering import QUESTION, REWORDED, steering_rules

ASK = ["ask", QUESTION, "--corpus", "films", *PAPER_VOTE_ARGS]


@pytest.fixture
def scripted_env(
    engine: Engine, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_scripted_model(monkeypatch, database_url, tmp_path, steering_rules(build_corpus(engine)))


def typed(monkeypatch: pytest.MonkeyPatch, *lines: str) -> None:
    """What the reviewer types at the prompts."""
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))


def answered(out: list[str], answer: str) -> bool:
    """Whether the run's summary gives `answer` (its citation marks, if any, after it)."""
    return any(
        line == f"answer: {answer}" or line.startswith(f"answer: {answer} [") for line in out
    )


def ledger(engine: Engine, thread: str) -> list[tuple[str, str | None]]:
    """(node, agent) of the thread's LLM calls, in the order they were made."""
    with transaction(engine) as session:
        rows = session.execute(
            select(LlmCall.node, LlmCall.agent_id)
            .where(LlmCall.run_id == thread)
            .order_by(LlmCall.id)
        ).all()
    return [(node, agent) for node, agent in rows]


def test_a_plan_edited_in_the_editor_runs_and_a_broken_edit_is_refused(
    scripted_env: None,
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    thread = f"review-{uuid.uuid4().hex[:8]}"
    typed(monkeypatch)  # no decision: the run stays paused
    assert main([*ASK, "--review", "--thread", thread]) == 1
    captured = capsys.readouterr()
    assert "plan review: the run waits for your decision" in captured.out.splitlines()
    assert "  2. Where was #1 born? (needs #1)" in captured.out.splitlines()
    assert "the run waits for its plan review" in captured.err
    assert ledger(engine, thread) == [("plan", None)]

    # Continued on its thread: a broken edit first (refused, asked again), then a good one.
    typed(monkeypatch, "e", "e")
    marker = tmp_path / "edited-once"
    broken_then_good = tmp_path / "second.py"
    broken_then_good.write_text(
        "import sys, pathlib\n"
        "path = pathlib.Path(sys.argv[1])\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        f"new = {REWORDED!r} if marker.exists() else 'Where was #3 born?'\n"
        "marker.touch()\n"
        "path.write_text(path.read_text().replace('Where was #1 born?', new))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {broken_then_good}")
    assert main([*ASK, "--thread", thread]) == 0
    out = capsys.readouterr().out.splitlines()
    refusal = (
        "  Not used: the edit is refused: sub-question 2 refers to #3, but the plan has no "
        "sub-question 3 (it has 2)"
    )
    assert refusal in out
    assert answered(out, "the city of Lisbon")
    assert ledger(engine, thread) == [
        ("plan", None),
        *[("rewrite", "sq1"), ("select_entities", "sq1"), ("evaluate", "sq1")],
        *[("rewrite", "sq2"), ("select_entities", "sq2"), ("evaluate", "sq2")],
        ("synthesize", None),
    ]


def test_fork_a_hop_with_another_setting_and_show_the_branches(
    scripted_env: None, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = f"fork-{uuid.uuid4().hex[:8]}"
    assert main([*ASK, "--quiet", "--thread", thread]) == 0
    capsys.readouterr()
    made = len(ledger(engine, thread))

    fork = ["fork", thread, "--at", "sq2", "--set", "k_passages=3", "--question", REWORDED]
    assert main(fork) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"thread: {thread}"
    assert out[1].startswith("fork at sq2 from checkpoint ") and out[1].endswith(
        "with k_passages=3"
    )
    assert "  [sq2 · rewrite] " in "\n".join(out)
    assert answered(out, "the city of Lisbon")
    # Only hop 2 and the synthesis were asked again.
    assert ledger(engine, thread)[made:] == [
        ("rewrite", "sq2"),
        ("select_entities", "sq2"),
        ("evaluate", "sq2"),
        ("synthesize", None),
    ]
    table = out[out.index("branches of this turn: 2 (* the latest)") :]
    assert table[2].split()[:3] == ["original", "run", "-"]
    assert "* fork at sq2" in table[3] and f"k_passages=3; asked: {REWORDED}" in table[3]
    assert table[3].endswith("1,420 in / 148 out, 8 calls (650 in / 60 out, 4 calls)")
    assert table[2].endswith("1,770 in / 181 out, 10 calls (1,770 in / 181 out, 10 calls)")

    assert main(["show", thread]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert "branches of this turn: 2 (* the latest)" in shown
    # The fork's branch is shown, marked where it leaves the original.
    note = shown.index(f"── fork at sq2 from here: k_passages=3; asked: {REWORDED}")
    assert shown[note + 1].startswith("step   5  schedule")
    assert sum(1 for line in shown if "  synthesize  " in line) == 1
    assert shown[-1] == "status: done"

    assert main(["fork", thread, "--at", "sq9"]) == 2
    assert "refused: the plan has no sub-question 9 (it has 2)" in capsys.readouterr().err
    assert main(["fork", "no-such-thread", "--at", "plan"]) == 2
    assert "refused: no checkpoints for thread no-such-thread" in capsys.readouterr().err


def test_a_fork_at_the_plan_can_be_reviewed(
    scripted_env: None,
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    thread = f"fork-review-{uuid.uuid4().hex[:8]}"
    assert main([*ASK, "--quiet", "--thread", thread]) == 0
    typed(monkeypatch, "Ask for the city, not the place.", "a")
    assert main(["fork", thread, "--at", "plan", "--set", "review_plan=true", "--quiet"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  Planned again with your guidance: Ask for the city, not the place." in out
    assert answered(out, "the city of Lisbon")
    assert [node for node, _ in ledger(engine, thread)].count("plan") == 3
