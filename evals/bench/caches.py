"""Emptying the CPU's caches of a model's weights, to time what a call costs after other work.

In a question's path the embedder runs between calls of the chat model, whose pass reads far
more memory than any cache holds: the embedder then reads its weights from memory again. One
question inside `grasp ask` took 12-25 ms where the bench's back-to-back questions took 4
(docs/scale.md). Reading a buffer twice the size of the last-level cache before a call puts it
in that state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
#: The buffer's bounds: a VM may report no cache, or a socket's whole L3 shared with others.
MIN_FLUSH_BYTES = 256 * 2**20
MAX_FLUSH_BYTES = 2 * 2**30
_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}


def last_level_cache_bytes(cache_dir: Path = CACHE_DIR) -> int | None:
    """The largest cache the first CPU reports (sysfs sizes such as `491520K`), or None."""
    sizes: list[int] = []
    for index in sorted(cache_dir.glob("index*")):
        try:
            raw = (index / "size").read_text().strip()
        except OSError:
            continue
        unit = _UNITS.get(raw[-1:].upper(), 1)
        digits = raw[:-1] if raw[-1:].upper() in _UNITS else raw
        if digits.isdigit():
            sizes.append(int(digits) * unit)
    return max(sizes) if sizes else None


def flush_bytes(cache_bytes: int | None) -> int:
    """Twice the last-level cache, within the bounds above."""
    wanted = 2 * cache_bytes if cache_bytes else MIN_FLUSH_BYTES
    return min(max(wanted, MIN_FLUSH_BYTES), MAX_FLUSH_BYTES)


class CacheFlusher:
    """A buffer read end to end before each cold call."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size if size is not None else flush_bytes(last_level_cache_bytes())
        self._buffer = np.ones(self.size // 8, dtype=np.float64)

    def flush(self) -> float:
        """Read the whole buffer (its sum, so the read cannot be skipped)."""
        return float(self._buffer.sum())
