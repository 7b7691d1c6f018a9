"""The embedded server's settings file, and a restart that applies it (for cold-start benches)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from store.embedded import (
    HANDLE_FILE,
    INCLUDE_LINE,
    SETTINGS_FILE,
    cgroup_memory_limit,
    restart_embedded_server,
    server_settings,
    start_embedded_server,
    write_server_settings,
)
from tests.store.own_server import own_data_dir

GB = 1024**3


def test_shared_buffers_take_a_quarter_of_memory_within_bounds() -> None:
    assert server_settings(8 * GB)["shared_buffers"] == "2048MB"
    assert server_settings(4 * GB)["shared_buffers"] == "1024MB"
    assert server_settings(24 * GB)["shared_buffers"] == "6144MB"  # holds a 600k-unit corpus
    assert server_settings(64 * GB)["shared_buffers"] == "8192MB"  # capped
    assert server_settings(GB // 4)["shared_buffers"] == "128MB"  # never below the default
    assert server_settings(4 * GB)["effective_cache_size"] == "2048MB"
    # Checkpoints spaced for bulk loads, whatever the memory.
    assert server_settings(GB)["max_wal_size"] == server_settings(64 * GB)["max_wal_size"] == "4GB"


def test_a_containers_memory_limit_is_read_from_its_cgroup(tmp_path: Path) -> None:
    v2, v1 = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    assert cgroup_memory_limit((v2, v1)) is None  # neither file: no limit known
    v1.write_text("9223372036854771712\n")  # v1 without a limit: a huge number
    assert cgroup_memory_limit((v2, v1)) == 9223372036854771712
    v2.write_text("max\n")  # v2 is read first, and "max" means no limit
    assert cgroup_memory_limit((v2, v1)) is None
    v2.write_text(f"{4 * GB}\n")
    assert cgroup_memory_limit((v2, v1)) == 4 * GB


def test_settings_file_and_include_are_written_once(tmp_path: Path) -> None:
    (tmp_path / "postgresql.conf").write_text("max_connections = 100\n")

    assert write_server_settings(tmp_path, memory_bytes=4 * GB) is True
    assert write_server_settings(tmp_path, memory_bytes=4 * GB) is False
    conf = (tmp_path / "postgresql.conf").read_text().splitlines()
    assert conf.count(INCLUDE_LINE) == 1 and conf[0] == "max_connections = 100"
    assert "shared_buffers = '1024MB'" in (tmp_path / SETTINGS_FILE).read_text()
    # Other memory, other sizes: the file follows.
    assert write_server_settings(tmp_path, memory_bytes=8 * GB) is True
    assert "shared_buffers = '2048MB'" in (tmp_path / SETTINGS_FILE).read_text()


@pytest.fixture
def data_dir() -> Iterator[Path]:
    yield from own_data_dir("grasp-settings-")


def _setting_bytes(uri: str, setting: str) -> int:
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT pg_size_bytes(current_setting(%s))", (setting,)).fetchone()
    assert row is not None
    return int(row[0])


def _eventually_bytes(uri: str, setting: str, wanted: int) -> int:
    # The postmaster applies a reload signal on its own time: new sessions see it shortly after.
    for _ in range(50):
        value = _setting_bytes(uri, setting)
        if value == wanted:
            break
        time.sleep(0.1)
    return value


def _postmaster(data_dir: Path) -> str:
    return (data_dir / "postmaster.pid").read_text().splitlines()[0]


def test_restart_applies_the_settings_and_yields_to_other_users(data_dir: Path) -> None:
    uri = start_embedded_server(data_dir)
    wanted = server_settings(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    # A data directory created just now started on the defaults; the file is there for later,
    # and what a reload applies is applied already.
    assert (data_dir / SETTINGS_FILE).exists()
    assert _eventually_bytes(uri, "max_wal_size", 4 * GB) == 4 * GB
    before = _postmaster(data_dir)

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (data_dir / HANDLE_FILE).write_text(json.dumps([sleeper.pid]))
        assert restart_embedded_server(data_dir) == (sleeper.pid,)
        assert _postmaster(data_dir) == before  # left running for its other user
    finally:
        sleeper.kill()
        sleeper.wait()

    assert restart_embedded_server(data_dir) == ()
    assert _postmaster(data_dir) != before
    for name in ("shared_buffers", "effective_cache_size"):
        assert _setting_bytes(uri, name) == int(wanted[name].removesuffix("MB")) * 1024**2
    assert _setting_bytes(uri, "max_wal_size") == 4 * GB
    with psycopg.connect(uri) as conn:
        row = conn.execute("SHOW checkpoint_timeout").fetchone()
    assert row == ("15min",)
