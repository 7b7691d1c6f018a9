"""A scratch GRASP installation for fault trials, and each case's outcome as one table row.

The scratch install has its own data directory and embedded server; `grasp` commands run in it
as real processes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine

from graphs.runtime.services import open_engine
from graphs.runtime.settings import Settings
from store.embedded import stop_embedded_server
from store.engine import StoreError

#: Seconds any one `grasp` command may take before the trial counts it as hung.
COMMAND_TIMEOUT_S = 180.0
POLL_S = 0.1


@dataclass(frozen=True)
class Finished:
    """A `grasp` command that ended: exit code (negative: killed by that signal) and its output."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def last_error_line(self) -> str:
        """What the user saw last on stderr (progress-bar redraws split on carriage returns)."""
        lines = [part.strip() for part in self.stderr.replace("\r", "\n").splitlines()]
        lines = [line for line in lines if line]
        return lines[-1] if lines else ""

    @property
    def error_lines(self) -> int:
        """How many lines the user got on stderr, warnings of libraries included."""
        return len([line for line in self.stderr.splitlines() if line.strip()])

    @property
    def traceback(self) -> bool:
        """Whether the user was shown a Python traceback."""
        return "Traceback (most recent call last)" in self.stderr


@dataclass
class CaseResult:
    """One row of the faults table."""

    case: str
    trials: int = 0
    completed: int = 0
    rows_lost: int = 0
    rows_duplicated: int = 0
    seen: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def saw(self, line: str) -> None:
        """Count one trial's last stderr line."""
        self.seen[line or "(nothing on stderr)"] += 1

    @property
    def user_saw(self) -> str:
        """The most common last stderr line, and how many trials showed something else."""
        if not self.seen:
            return "-"
        line, count = self.seen.most_common(1)[0]
        others = sum(self.seen.values()) - count
        return line if not others else f"{line} (+{others} other)"


class Scratch:
    """A throw-away data directory whose embedded server the trials' commands share."""

    def __init__(self, keep: bool = False) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="grasp-faults-"))
        self.keep = keep
        env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
        env.update(
            GRASP_DATA_DIR=str(self.root / "data"),
            GRASP_EMBEDDER="hash",
            GRASP_LLM_CACHE="0",  # a cached reply must never pass for a resumed or retried call
            GRASP_LLM_CONCURRENCY="1",  # one call at a time: kills land where the trial aims
        )
        self.env = env
        self.settings = Settings.from_env(env)
        self._engine: Engine | None = None
        self._runs = 0

    @property
    def engine(self) -> Engine:
        """The bench process's own engine on the scratch server (started and migrated on first use)."""
        if self._engine is None:
            try:
                self._engine, _ = open_engine(self.settings)
            except StoreError:
                # pgserver remembers in-process that it started the server, so after a
                # `grasp db stop` only another process brings it back, as it would for a user.
                self.run(["db", "url"])
                self._engine, _ = open_engine(self.settings)
        return self._engine

    def reconnect(self) -> None:
        """Drop pooled connections (after the server was stopped); the next use restarts it."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def path(self, name: str) -> Path:
        """A file in the scratch directory."""
        return self.root / name

    def start(self, args: list[str], env: dict[str, str] | None = None) -> Running:
        """Start `grasp ARGS` as a process of its own, its output going to files (never a full pipe)."""
        self._runs += 1
        out = self.root / f"run{self._runs}.out"
        err = self.root / f"run{self._runs}.err"
        with out.open("w") as stdout, err.open("w") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "graphs.cli", *args],
                env={**self.env, **(env or {})},
                stdout=stdout,
                stderr=stderr,
                text=True,
                start_new_session=True,
            )
        return Running(process, out, err)

    def run(self, args: list[str], env: dict[str, str] | None = None) -> Finished:
        """Run `grasp ARGS` to the end."""
        return self.start(args, env).finish()

    def stop_server(self) -> bool:
        """Do what `grasp db stop --force` does (in-process: a new command would start too late).

        True when the server was running and went down.
        """
        self.reconnect()
        return stop_embedded_server(self.settings.pg_data_dir, force=True).stopped

    def close(self) -> None:
        """Stop the scratch server and delete its directory (unless kept)."""
        self.reconnect()
        stop_embedded_server(self.settings.pg_data_dir, force=True)
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


@dataclass(frozen=True)
class Running:
    """A started `grasp` command and the files its output goes to."""

    process: subprocess.Popen[str]
    stdout: Path
    stderr: Path

    def alive(self) -> bool:
        """Whether the command is still running."""
        return self.process.poll() is None

    def kill(self) -> None:
        """kill -9, as a crash or the OOM killer would."""
        if self.alive():
            self.process.send_signal(signal.SIGKILL)

    def finish(self) -> Finished:
        """Wait for the end (killing a hung command) and collect the output."""
        note = ""
        try:
            self.process.wait(timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            self.process.wait()
            note = f"\n(hung: killed after {COMMAND_TIMEOUT_S:.0f} s)"
        return Finished(
            self.process.returncode,
            self.stdout.read_text(errors="replace"),
            self.stderr.read_text(errors="replace") + note,
        )


def verdict(first: Finished, stopped: bool) -> str:
    """How a command took its database being stopped under it."""
    if not stopped:
        return "not stopped in time (finished first)"
    if first.returncode == 0:
        return "completed after reconnecting"
    if first.traceback:
        shape = "a traceback"
    elif first.error_lines <= 2:
        shape = "one clear line"
    else:
        raw = " incl. a raw driver error" if "OperationalError" in first.stderr else ""
        shape = f"{first.error_lines} stderr lines{raw}"
    return f"stopped: exit {first.returncode}, {shape}"


def wait_until(running: Running, ready: Callable[[], bool], timeout_s: float = 120.0) -> bool:
    """Poll `ready` while the command runs; False when it ended or time ran out first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not running.alive():
            return False
        try:
            if ready():
                return True
        except Exception:  # the database may be starting or gone: look again shortly
            pass
        time.sleep(POLL_S)
    return False
