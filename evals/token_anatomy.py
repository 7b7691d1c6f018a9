"""Token anatomy: where a method's tokens go, by node and by prompt part, per question.

A result line's `anatomy` is built from the run's call records (the token tally every graph
keeps): per node its calls, input and output tokens, and the input split by prompt part
(nodes.llm.prompt_parts). The report averages the lines of one method over its questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from nodes.llm.prompt_parts import PARTS

#: The columns of one node's row: calls, tokens in and out, then the input by part.
COLUMNS = ("calls", "input", "output", *PARTS)


def anatomy_of(call_records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per node: calls, input, output and the input by prompt part, over one run's calls."""
    nodes: dict[str, dict[str, int]] = {}
    for call in call_records:
        row = nodes.setdefault(str(call["node"]), dict.fromkeys(COLUMNS, 0))
        row["calls"] += 1
        row["input"] += int(call.get("input", 0))
        row["output"] += int(call.get("output", 0))
        for part, tokens in (call.get("parts") or {}).items():
            if part in row:
                row[part] += int(tokens)
    return dict(sorted(nodes.items()))


def mean_anatomy(lines: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Each node's row averaged over the questions (a question without the node counts 0)."""
    with_anatomy = [line["anatomy"] for line in lines if line.get("anatomy") is not None]
    if not with_anatomy:
        return {}
    totals: dict[str, dict[str, float]] = {}
    for anatomy in with_anatomy:
        for node, row in anatomy.items():
            total = totals.setdefault(node, dict.fromkeys(COLUMNS, 0.0))
            for column in COLUMNS:
                total[column] += float(row.get(column, 0))
    n = len(with_anatomy)
    means = {node: {c: v / n for c, v in row.items()} for node, row in sorted(totals.items())}
    means["all"] = {c: sum(row[c] for row in means.values()) for c in COLUMNS}
    return means


def anatomy_rows(method: str, means: Mapping[str, Mapping[str, float]]) -> list[list[str]]:
    """The report's rows for one method: one per node, then its total."""
    rows = []
    for node, row in means.items():
        calls = f"{row['calls']:.1f}"
        rows.append([method, node, calls, *(f"{row[c]:.0f}" for c in COLUMNS[1:])])
    return rows
