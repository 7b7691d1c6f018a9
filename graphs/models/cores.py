"""How many cores this process may use: local models size their threads by it."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
