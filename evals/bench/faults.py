"""`grasp bench faults`: kill, starve and disturb real `grasp` commands; count what survives.

Each case runs its trials in a scratch data directory with its own embedded server (the user's
corpora are never touched) and prints one table row: trials, how many completed with exactly
the uninterrupted run's rows, rows lost and duplicated, and the last stderr line users saw.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

from evals.faults.harness import CaseResult, Scratch

#: Case names for --case, in the order they run.
CASES = ("index-kill", "ask-kill", "provider-faults", "db-restart")
#: Provider fault rates, as the issue asks.
FAULT_RATES = (0.1, 0.3)
USER_SAW_WIDTH = 90


def register_bench(benches: Any) -> None:
    """Add `grasp bench faults` to the `bench` sub-commands."""
    faults: argparse.ArgumentParser = benches.add_parser(
        "faults", help="kill -9, provider faults and database restarts against real commands"
    )
    faults.add_argument("--small", action="store_true", help="few trials per case (for tests)")
    faults.add_argument(
        "--case",
        nargs="+",
        action="extend",
        choices=CASES,
        metavar="NAME",
        help=f"cases to run, of {', '.join(CASES)} (default: all)",
    )
    faults.add_argument("--seed", type=int, default=0, help="draws the kill points")
    faults.add_argument("--keep", action="store_true", help="keep the scratch directory")
    faults.set_defaults(handler=handle_faults)


def trials(small: bool) -> dict[str, int]:
    """Trials per case: the issue's numbers, or a handful with --small."""
    if small:
        return {"index-kill": 2, "ask-kill": 1, "provider-faults": 1, "db-restart": 1}
    return {"index-kill": 10, "ask-kill": 3, "provider-faults": 5, "db-restart": 3}


def run_cases(scratch: Scratch, cases: list[str], small: bool, seed: int) -> list[CaseResult]:
    """Run the chosen cases in order; the uninterrupted runs are made once and shared."""
    from evals.faults import index_cases, scenario
    from evals.faults.ask_cases import AskCases

    counts = trials(small)
    rows: list[CaseResult] = []
    index_baseline: tuple[str, dict[str, int]] | None = None
    asks: AskCases | None = None

    def indexed() -> tuple[str, dict[str, int]]:
        nonlocal index_baseline
        if index_baseline is None:
            path = index_cases.write_corpus(scratch)
            index_baseline = path, index_cases.baseline(scratch, path)[0]
        return index_baseline

    def asked() -> AskCases:
        nonlocal asks
        if asks is None:
            asks = AskCases(scratch)
        return asks

    runners: dict[str, Callable[[], list[CaseResult]]] = {
        "index-kill": lambda: [
            index_cases.kill_index(scratch, *indexed(), counts["index-kill"], seed)
        ],
        "ask-kill": lambda: [
            asked().kill(point, counts["ask-kill"]) for point in scenario.KILL_POINTS
        ],
        "provider-faults": lambda: [
            asked().provider_faults(rate, counts["provider-faults"]) for rate in FAULT_RATES
        ],
        "db-restart": lambda: [
            index_cases.stop_database_mid_index(scratch, *indexed(), counts["db-restart"]),
            asked().stop_database(counts["db-restart"]),
        ],
    }
    for case in CASES:
        if case in cases:
            rows += runners[case]()
    return rows


def table(rows: list[CaseResult]) -> list[str]:
    """The faults table and, under it, each case's notes."""
    head = f"{'case':<38}{'trials':>7}{'completed':>10}{'lost':>6}{'dup':>5}  what the user saw"
    lines = [head]
    for row in rows:
        saw = row.user_saw
        if len(saw) > USER_SAW_WIDTH:
            saw = saw[: USER_SAW_WIDTH - 1] + "…"
        lines.append(
            f"{row.case:<38}{row.trials:>7}{row.completed:>10}{row.rows_lost:>6}"
            f"{row.rows_duplicated:>5}  {saw}"
        )
    for row in rows:
        lines += [f"{row.case}: {note}" for note in row.notes]
    return lines


def all_well(rows: list[CaseResult]) -> bool:
    """Every trial completed with nothing lost or duplicated."""
    return all(r.completed == r.trials and not r.rows_lost and not r.rows_duplicated for r in rows)


def handle_faults(args: argparse.Namespace) -> int:
    """Run `grasp bench faults`: the chosen cases in a scratch install, then the table."""
    from evals.bench.hardware import cpu_model
    from graphs.cli.main import console
    from store.engine import server_version

    scratch = Scratch(keep=args.keep)
    started = time.monotonic()
    try:
        rows = run_cases(scratch, args.case or list(CASES), args.small, args.seed)
        server = server_version(scratch.engine)
    finally:
        scratch.close()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    size = "small" if args.small else "full"
    for line in (
        f"grasp bench faults — {size} run, seed {args.seed}, scratch data directory "
        f"{scratch.root}{'' if args.keep else ' (deleted)'}",
        f"hardware: {os.cpu_count()} CPUs, {cpu_model()}; PostgreSQL {server}; load average {load}",
        "index: synthetic extractor, hash embedder; ask: scripted chat model, hash embedder, "
        "LLM cache off; rows = counts (index) or successful ledger calls (ask) against an "
        "uninterrupted run",
        *table(rows),
        f"wall time: {time.monotonic() - started:.0f} s",
    ):
        console.print(line, markup=False, soft_wrap=True)
    return 0 if all_well(rows) else 1
