"""`grasp db stop` really stops the embedded server, even after a command was killed with -9."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.embedded import HANDLE_FILE, start_embedded_server
from tests.store.own_server import START, own_data_dir


@pytest.fixture
def data_dir() -> Iterator[Path]:
    yield from own_data_dir("grasp-stop-")


def grasp_db(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GRASP_DATA_DIR": str(data_dir.parent)}
    env.pop("DATABASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "graphs.cli", "db", *args], env=env, capture_output=True, text=True
    )


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stop_after_a_killed_command_left_its_pid(data_dir: Path) -> None:
    subprocess.run([sys.executable, "-c", START, str(data_dir)], check=True)
    assert (data_dir / "postmaster.pid").exists()  # the server outlives the command
    # A command killed with -9 never removes itself from the server's list of users.
    (data_dir / HANDLE_FILE).write_text(json.dumps([dead_pid()]))

    done = grasp_db(data_dir, "stop")

    assert (done.returncode, done.stdout.strip()) == (0, "stopped")
    assert not (data_dir / "postmaster.pid").exists()
    assert json.loads((data_dir / HANDLE_FILE).read_text()) == []
    again = grasp_db(data_dir, "stop")
    assert (again.returncode, again.stdout.strip()) == (0, "no embedded server running")


def test_stop_refuses_while_a_command_uses_it_unless_forced(data_dir: Path) -> None:
    start_embedded_server(data_dir)  # this test process registers as a user
    user = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (data_dir / HANDLE_FILE).write_text(json.dumps([user.pid]))
        refused = grasp_db(data_dir, "stop")
        assert refused.returncode == 1
        assert refused.stderr.strip() == (
            f"not stopped: grasp commands still use it (pid {user.pid}); add --force"
        )
        assert (data_dir / "postmaster.pid").exists()

        forced = grasp_db(data_dir, "stop", "--force")
        assert (forced.returncode, forced.stdout.strip()) == (0, "stopped")
        assert not (data_dir / "postmaster.pid").exists()
    finally:
        user.kill()
        user.wait()


def test_db_url_shows_a_configured_url_without_connecting(tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": "postgresql://ann:secret@127.0.0.1:1/nowhere"}
    shown = subprocess.run(
        [sys.executable, "-m", "graphs.cli", "db", "url"], env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0
    assert "127.0.0.1:1/nowhere" in shown.stdout
    assert "secret" not in shown.stdout
