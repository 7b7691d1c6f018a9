"""Failures reach the user as one line and a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys


def test_unreachable_database_is_one_clear_line() -> None:
    env = {**os.environ, "DATABASE_URL": "postgresql://ann:secret@127.0.0.1:1/nowhere"}
    done = subprocess.run(
        [sys.executable, "-m", "graphs.cli", "runs"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: the database cannot be reached: ")
    assert "Traceback" not in done.stderr and "secret" not in done.stderr


def test_benchmarks_refuse_a_corpus_that_is_not_theirs() -> None:
    for bench in ("index", "retrieve"):
        done = subprocess.run(
            [sys.executable, "-m", "graphs.cli", "bench", bench, "--corpus", "my-papers"],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2
        assert "must start with 'bench-' (got 'my-papers')" in done.stderr
        assert "Traceback" not in done.stderr
