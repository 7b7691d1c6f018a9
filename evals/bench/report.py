"""The lines `grasp bench retrieve` prints: latency percentiles, verdicts against targets, context."""

from __future__ import annotations

import os
import statistics

import numpy as np
from sqlalchemy import Engine

from evals.bench.hardware import cpu_model
from evals.bench.methods import TARGET_COLD_P50_MS, TARGET_P50_MS, TARGET_P95_MS
from store.engine import server_version


def latency_line(label: str, values: list[float]) -> str:
    """One table row: p50, p95 and mean of `values` (ms)."""
    p95 = percentile(values, 0.95)
    median, mean = statistics.median(values), statistics.fmean(values)
    return f"{label:<24}{median:>8.1f}{p95:>8.1f}{mean:>8.1f}"


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (`share` in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, int(np.ceil(share * len(ordered))) - 1)]


def verdict(method: str, totals: list[float]) -> str:
    """The method's p50 (and p95) against its targets, if it has them."""
    p50 = statistics.median(totals)
    target = TARGET_P50_MS.get(method)
    if target is None:
        return f"{method}: p50 {p50:.1f} ms (no target)"
    verdict = f"{method}: p50 {p50:.1f} ms, target ≤ {target:.0f} ms: {met(p50 <= target)}"
    if (p95_target := TARGET_P95_MS.get(method)) is not None:
        p95 = percentile(totals, 0.95)
        verdict += f"; p95 {p95:.1f} ms, target ≤ {p95_target:.0f} ms: {met(p95 <= p95_target)}"
    return verdict


def met(ok: bool) -> str:
    """A target's outcome as the table shows it."""
    return "met" if ok else "MISSED"


def cold_line(cold: list[float]) -> str:
    """The first queries after a server restart against the cold-start target."""
    p50 = statistics.median(cold)
    return (
        f"cold start: first {len(cold)} queries after a server restart p50 {p50:.1f} ms, "
        f"max {max(cold):.1f} ms, target p50 ≤ {TARGET_COLD_P50_MS:.0f} ms: "
        f"{met(p50 <= TARGET_COLD_P50_MS)}"
    )


def context_lines(engine: Engine) -> list[str]:
    """The hardware, the server's version and the load the numbers were taken under."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"hardware: {os.cpu_count()} CPUs, {cpu_model()}; PostgreSQL {server_version(engine)}; "
        f"load average {load}"
    ]


def print_lines(lines: list[str]) -> None:
    """Print plain lines (no markup) to the CLI's console."""
    from graphs.cli.main import console

    for line in lines:
        console.print(line, markup=False, soft_wrap=True)
