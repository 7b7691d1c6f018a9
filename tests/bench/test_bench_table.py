"""The faults table: one row per case, the verdict, and the most common thing users saw."""

from evals.bench.faults import all_well, table, trials
from evals.faults.harness import CaseResult, Finished, verdict


def test_rows_notes_and_the_common_last_line() -> None:
    clean = CaseResult("kill -9 index, re-run", trials=3, completed=3)
    for line in ["", "", "error: x"]:
        clean.saw(line)
    lossy = CaseResult("db stopped mid-ask", trials=2, completed=1, rows_lost=4, rows_duplicated=1)
    lossy.saw("error: the database cannot be reached " + "x" * 200)
    lossy.notes.append("stopped: exit 1, one clear line")
    lines = table([clean, lossy])
    assert lines[0].split()[:6] == ["case", "trials", "completed", "lost", "dup", "what"]
    assert lines[1].split()[4:] == [
        "3",
        "3",
        "0",
        "0",
        "(nothing",
        "on",
        "stderr)",
        "(+1",
        "other)",
    ]
    assert lines[2].split()[3:7] == ["2", "1", "4", "1"] and lines[2].endswith("…")
    assert lines[3] == "db stopped mid-ask: stopped: exit 1, one clear line"
    assert not all_well([clean, lossy]) and all_well([clean])


def test_small_runs_fewer_trials_than_the_full_suite() -> None:
    small, full = trials(True), trials(False)
    assert small.keys() == full.keys() and all(small[c] < full[c] for c in full)
    assert full["index-kill"] == 10


def test_how_a_stopped_command_is_described() -> None:
    assert verdict(Finished(0, "ok", ""), stopped=False).startswith("not stopped")
    assert verdict(Finished(0, "ok", ""), stopped=True) == "completed after reconnecting"
    clear = Finished(1, "", "error: the database cannot be reached\n")
    assert verdict(clear, stopped=True) == "stopped: exit 1, one clear line"
    raw = Finished(1, "", "a\nb\n(psycopg.OperationalError) c\nd\n")
    assert verdict(raw, stopped=True) == "stopped: exit 1, 4 stderr lines incl. a raw driver error"
    trace = Finished(1, "", "Traceback (most recent call last):\n  x\nValueError\n")
    assert verdict(trace, stopped=True) == "stopped: exit 1, a traceback"
    assert trace.last_error_line == "ValueError"
    assert Finished(0, "", "50%\r100%\r\n").last_error_line == "100%"
