"""The cores this process may use and what they compute: local models size and pick by them."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The first processor's feature flags in /proc/cpuinfo (`cpuinfo` instead, for tests)."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as handle:
                cpuinfo = handle.read()
        except OSError:  # not on Linux: no flags known
            return set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return set()


def multiplies_bfloat16(flags: set[str]) -> bool:
    """Whether the cores multiply bfloat16 matrices in hardware (Intel AMX)."""
    return "amx_bf16" in flags
