"""Settings added after results were recorded: files made before them resume, a run using them is
told apart."""

from pathlib import Path

import pytest
from sqlalchemy import Engine

from evals.qa_run import ADDED_LATER, QaRun
from evals.results import SettingsChanged, check_settings
from tests.fixtures.films import services


def test_a_later_setting_at_its_old_behaviour_is_not_written(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    svc = services(engine, database_url, [])
    plain = QaRun(svc, "grasp", tmp_path / "plain.jsonl", "plain").settings()
    assert not set(ADDED_LATER) & set(plain["grasp"])
    lean = QaRun(
        svc,
        "grasp",
        tmp_path / "lean.jsonl",
        "lean",
        method_settings={"first_search": "question", "focus_chars": 300},
    ).settings()
    assert (lean["grasp"]["first_search"], lean["grasp"]["focus_chars"]) == ("question", 300)
    assert "max_tokens" not in lean["grasp"]

    # A file recorded before the settings existed resumes under the plain run...
    recorded = [{"id": "q1", "settings": plain}]
    check_settings(tmp_path / "old.jsonl", recorded, plain)
    # ...and is refused, naming the change, under a run that uses one of them.
    with pytest.raises(SettingsChanged, match=r"grasp\.first_search: None → 'question'"):
        check_settings(tmp_path / "old.jsonl", recorded, lean)
