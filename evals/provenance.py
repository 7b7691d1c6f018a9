"""Where an eval's numbers came from: the command line that ran it and the commit it ran at."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_command(argv: Sequence[str] | None = None) -> str:
    """The command line as a user would type it again: `grasp …` when run through the CLI."""
    args = list(sys.argv if argv is None else argv)
    if args and Path(args[0]).name == "grasp":
        args[0] = "grasp"
    return shlex.join(args)


def source_commit(repo: Path = REPO) -> str | None:
    """HEAD's commit, marked `+dirty` when tracked files differ from it; None outside git."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if changed else head


def provenance(argv: Sequence[str] | None = None) -> dict[str, str | None]:
    """`command` and `commit`, the two keys an eval summary records for docs/results.md."""
    return {"command": run_command(argv), "commit": source_commit()}
