"""Retrieval summaries: what `grasp eval-retrieval` records, and their rows in docs/results.md.

A run writes `<label>-<mode>.summary.json` beside its lines, with its mean recalls, the
embedder, the command and the commit. Committed as `results/<question set>/retrieval/…`, each
becomes a row of that set's recall table, so the retrieval tables are not typed by hand either.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.provenance import provenance
from evals.summary import format_number

KIND = "retrieval"
KS = ("2", "5", "10")
HEADER = ["method", "mode", "embedder", "n", "R@2", "R@5", "R@10"]


@dataclass(frozen=True)
class RecallRow:
    """One committed retrieval summary: overall recalls and where they came from."""

    source: str
    question_set: str
    method: str
    mode: str
    embedder: str
    overall: Mapping[str, float]
    command: str
    commit: str


def retrieval_summary(
    label: str,
    mode: str,
    corpus: str,
    embedder: str,
    recall: Mapping[str, Mapping[str, float]],
    skipped: int,
    argv: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The summary a retrieval run writes: recalls per group plus its provenance."""
    groups = [{"group": group, **values} for group, values in recall.items()]
    return {
        "kind": KIND,
        "method": label,
        "mode": mode,
        "corpus": corpus,
        "embedder": embedder,
        "skipped": skipped,
        "groups": groups,
        **provenance(argv),
    }


def write_retrieval_summary(path: Path, summary: Mapping[str, Any]) -> None:
    """Write a summary as indented JSON (committed files diff line by line)."""
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def is_retrieval(data: Any) -> bool:
    """Whether a parsed summary file is a retrieval summary."""
    return isinstance(data, dict) and data.get("kind") == KIND


def recall_row(data: Mapping[str, Any], path: Path, shown: str) -> RecallRow:
    """A retrieval summary as a row; one that lacks its recalls is refused in one line."""
    groups = data.get("groups")
    overall = next((g for g in groups or [] if isinstance(g, dict) and g.get("group") == "all"), {})
    if not all(isinstance(overall.get(k), int | float) for k in ("n", *KS)):
        raise ValueError(f"{shown}: not a retrieval summary (needs an 'all' group with R@2/5/10)")
    # results/<question set>/retrieval/<file>: the set is the folder above `retrieval`.
    return RecallRow(
        source=shown,
        question_set=path.parent.parent.name,
        method=str(data.get("method", "?")),
        mode=str(data.get("mode", "?")),
        embedder=str(data.get("embedder") or "not recorded"),
        overall={k: float(overall[k]) for k in ("n", *KS)},
        command=str(data.get("command") or "not recorded"),
        commit=str(data.get("commit") or "not recorded"),
    )


def recall_cells(row: RecallRow) -> list[str]:
    """A row's cells in HEADER order (the caller adds command and commit)."""
    o = row.overall
    return [row.method, row.mode, row.embedder, str(int(o["n"]))] + [
        format_number(o[k]) for k in KS
    ]


def recall_tables(rows: Sequence[RecallRow], code: Any) -> list[str]:
    """Markdown lines: one recall table per question set, rows by mode then method."""
    if not rows:
        return []
    lines = [
        "## Retrieval recall",
        "",
        "Recall@k of the gold passages with no LLM call (`grasp eval-retrieval`); one row per "
        "committed `results/<question set>/retrieval/*.summary.json`.",
        "",
    ]
    header = [*HEADER, "command", "commit"]
    by_set: dict[str, list[RecallRow]] = {}
    for row in rows:
        by_set.setdefault(row.question_set, []).append(row)
    for name in sorted(by_set):
        lines += [f"### {name}", ""]
        lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        for row in sorted(by_set[name], key=lambda r: (r.mode, r.method)):
            cells = [*recall_cells(row), code(row.command), code(row.commit)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines
