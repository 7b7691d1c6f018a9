"""A run's steps as the page shows them: each node's write summary, tokens, calls and timing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph.types import Overwrite, StateSnapshot

from graphs.cli.ask_report import summarize
from graphs.peers.registry import METHODS
from graphs.runtime.run_history import describe, step_of
from graphs.viewer.model import CallView, StepView, TaskView


def error_text(error: BaseException | str | None) -> str:
    """'Type: message' of a failed task, one line (read back, an error may be its repr string)."""
    if error is None:
        return ""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return " ".join(text.replace("\\n", " ").split())


def records_of(write: Any) -> list[dict[str, Any]]:
    """The call records a node's write carries in its token tally."""
    if not isinstance(write, dict):
        return []
    tokens = write.get("tokens")
    if isinstance(tokens, Overwrite):  # the plan step resets the tally: its value is inside
        tokens = tokens.value
    elif isinstance(tokens, dict) and tokens.get("type") == "__overwrite__":  # same, as JSON
        tokens = tokens.get("value")
    return list(tokens.get("records", [])) if isinstance(tokens, dict) else []


def token_sums(write: Any) -> tuple[int, int]:
    """(input, output) tokens a node's write reports."""
    records = records_of(write)
    return sum(int(r["input"]) for r in records), sum(int(r["output"]) for r in records)


def call_view(step: int, record: dict[str, Any], in_tally: bool) -> CallView:
    """A call record as the chart shows it."""
    return CallView(
        step=step,
        node=str(record.get("node", "?")),
        agent=record.get("agent"),
        iteration=record.get("iteration"),
        input=int(record.get("input", 0)),
        output=int(record.get("output", 0)),
        cached=bool(record.get("cached", False)),
        latency_s=float(record.get("latency_s", 0.0)),
        in_tally=in_tally,
    )


def write_summary(graph_name: str, node: str, write: Any) -> str:
    """One line on a node's write: the method's own words where it is a registered method."""
    if graph_name in METHODS:
        return describe(graph_name, node, write)
    return summarize(node, write)


def task_view(graph_name: str, name: str, error: BaseException | None, result: Any) -> TaskView:
    """One node run: done (with a summary of its write), failed, or pending."""
    tokens_in, tokens_out = token_sums(result)
    if error is not None:
        return TaskView(name, "failed", "", error_text(error), tokens_in, tokens_out)
    if result is None:
        return TaskView(name, "pending", "(not run yet)")
    summary = write_summary(graph_name, name, result)
    return TaskView(name, "done", summary, "", tokens_in, tokens_out)


def seconds_between(first: str | None, then: str | None) -> float | None:
    """Seconds from one checkpoint's timestamp to another's."""
    if not first or not then:
        return None
    return (datetime.fromisoformat(then) - datetime.fromisoformat(first)).total_seconds()


def steps_of(graph_name: str, run: list[StateSnapshot]) -> list[StepView]:
    """The run's supersteps with each node's write summary and the time to the next checkpoint."""
    views: list[StepView] = []
    for i, snapshot in enumerate(run):
        if not snapshot.tasks:
            continue
        following = run[i + 1].created_at if i + 1 < len(run) else None
        views.append(
            StepView(
                step_of(snapshot) + 1,
                [task_view(graph_name, t.name, t.error, t.result) for t in snapshot.tasks],
                snapshot.created_at or "",
                seconds_between(snapshot.created_at, following),
            )
        )
    return views
