"""`grasp bench faults --small` as a user runs it: real processes, a scratch embedded server.

One run of every case (index and ask kills, provider faults, database restarts; ≈ 75 s).
"""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROW_CASES = {
    "provider-faults": ["provider faults 10%", "provider faults 30%"],
    "index-kill": ["kill -9 index, re-run"],
    "ask-kill": [
        "kill -9 ask after the planner, resume",
        "kill -9 ask mid sub-agent, resume",
        "kill -9 ask before synthesis, resume",
    ],
    "db-restart": ["db stopped mid-index", "db stopped mid-ask"],
}


def bench(*cases: str) -> tuple[int, dict[str, list[int]], list[str]]:
    """Run the small bench; return its exit code, table rows by case, and all output lines."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    command = [sys.executable, "-m", "graphs.cli", "bench", "faults", "--small", "--case", *cases]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    lines = done.stdout.splitlines()
    assert "Traceback" not in done.stderr, done.stderr
    header = next(i for i, line in enumerate(lines) if line.startswith("case "))
    rows: dict[str, list[int]] = {}
    for line in lines[header + 1 :]:
        name, _, rest = line.partition("  ")
        numbers = rest.split()
        if len(numbers) < 4 or not all(n.isdigit() for n in numbers[:4]):
            break
        rows[name.strip()] = [int(n) for n in numbers[:4]]
    return done.returncode, rows, lines


def assert_clean(rows: dict[str, list[int]], cases: list[str]) -> None:
    for case in cases:
        trials, completed, lost, duplicated = rows[case]
        assert trials >= 1 and completed == trials, (case, rows[case])
        assert (lost, duplicated) == (0, 0), (case, rows[case])


def test_the_small_suite_loses_and_repeats_nothing_and_says_one_line() -> None:
    code, rows, lines = bench(*ROW_CASES)
    expected = [case for cases in ROW_CASES.values() for case in cases]
    assert sorted(rows) == sorted(expected), lines
    assert_clean(rows, expected)
    assert code == 0, lines
    assert any(line.startswith("hardware: ") and "load average" in line for line in lines)
    flagged = [line for line in lines if line.startswith("provider faults 30%: ")]
    assert flagged and int(flagged[0].split(": ")[1].split()[0]) >= 1, flagged
    # A database stopped under a command: one clear line, not the driver's text.
    stops = [
        line
        for line in lines
        if line.startswith(("db stopped mid-index: ", "db stopped mid-ask: "))
    ]
    outcomes = ("one clear line", "completed after reconnecting", "not stopped in time")
    assert stops and all(any(o in line for o in outcomes) for line in stops), stops
    assert any("one clear line" in line or "reconnecting" in line for line in stops), stops
