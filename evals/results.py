"""Result files: one JSON object per line, appended as each question finishes, read back to resume.

Each line records the settings it was made with; a run resumes a file only if they are its own.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

DEFAULT_ROOT = Path("runs") / "eval"
RETRIEVAL_DIR = "retrieval"
CACHE_DIR = "cache"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def safe_name(name: str) -> str:
    """A file-name-safe form of a corpus or method label."""
    return _UNSAFE.sub("-", name).strip("-") or "unnamed"


def results_dir(root: Path | None, corpus: str) -> Path:
    """Where a corpus's result files live: runs/eval/<corpus>/ unless another root is given."""
    return (root or DEFAULT_ROOT) / safe_name(corpus)


class SettingsChanged(ValueError):
    """A results file holds answers made with other settings than this run's."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every complete record of a JSON-lines file (a missing file has none).

    A line cut short by an interruption is dropped and the file rewritten without it, so the
    next append starts on a fresh line and that question simply runs again.
    """
    if not path.exists():
        return []
    records: list[dict[str, Any]] = []
    damaged = False
    text = path.read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            damaged = True
            continue
        if isinstance(value, dict):
            records.append(value)
    if damaged or (text and not text.endswith("\n")):
        write_jsonl(path, records)
    return records


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace a JSON-lines file with `records`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.write_text(body, encoding="utf-8")


class JsonlAppender:
    """Appends records to one file from concurrent tasks, one whole line at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = asyncio.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    async def append(self, record: dict[str, Any]) -> None:
        """Write one finished record as a line; concurrent questions never interleave lines."""
        line = json.dumps(record, ensure_ascii=False) + "\n"
        async with self._lock:
            # Flushed per record: an interrupted run keeps every question it finished.
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()


def setting_changes(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    """'key: old → new' for every setting that differs (nested settings as 'grasp.key')."""
    changes: list[str] = []
    for key in sorted({*old, *new}):
        before, after = old.get(key), new.get(key)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            changes += setting_changes(before, after, f"{prefix}{key}.")
        elif before != after:
            changes.append(f"{prefix}{key}: {before!r} → {after!r}")
    return changes


def check_settings(
    path: Path, lines: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]
) -> None:
    """Raise SettingsChanged, in one line, when a line of the file was made with other settings."""
    other = [line for line in lines if line.get("settings") != settings]
    if not other:
        return
    recorded = other[0].get("settings")
    if isinstance(recorded, Mapping):
        changes = setting_changes(recorded, settings)
        shown = ", ".join(changes[:4]) + (
            f" and {len(changes) - 4} more" if len(changes) > 4 else ""
        )
        what = f"answers made with other settings ({shown})"
    else:
        what = f"{len(other)} answer(s) that do not record their settings (an older run)"
    raise SettingsChanged(
        f"{path} holds {what}; give this run its own --name, or delete the file to answer again"
    )
