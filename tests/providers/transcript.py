"""A protocol test's calls as lines (node, tokens, latency), printed when pytest runs with -s."""

from __future__ import annotations

from collections.abc import Iterable

import pytest


def show(
    config: pytest.Config, capsys: pytest.CaptureFixture[str], title: str, lines: Iterable[str]
) -> None:
    """Print `lines` under `title`, past the capture, only when output capture is off (-s)."""
    if config.getoption("capture") != "no":
        return
    with capsys.disabled():
        print(f"\n== {title}")
        for line in lines:
            print(f"   {line}")


def call_line(node: str, tokens_in: int, tokens_out: int, latency_s: float | None = None) -> str:
    """One call: who made it and what it cost."""
    took = f"  {latency_s:5.1f} s" if latency_s is not None else ""
    return f"{node:<16} {tokens_in:>5} in {tokens_out:>5} out{took}"
