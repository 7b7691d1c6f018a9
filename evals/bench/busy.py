"""Busy neighbours: processes that spin on the CPU while a bench times something beside them.

The agent embeds a hop's question while other hops' model calls hold the cores, so a latency
that only holds on a quiet machine is not the one a user sees; `--busy N` times it beside N.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from contextlib import contextmanager


def _spin() -> None:
    while True:
        pass


@contextmanager
def busy_neighbours(count: int) -> Iterator[None]:
    """Run `count` spinning processes for the duration of the block (none at 0)."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(count)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
        for spinner in spinners:
            spinner.join()
