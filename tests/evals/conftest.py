"""Fixtures shared by the eval tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.eval_films import QUESTIONS


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    """The toy MuSiQue question file the eval runners read."""
    path = tmp_path / "musique_toy.json"
    path.write_text(json.dumps(QUESTIONS))
    return path
