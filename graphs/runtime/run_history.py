"""Past GRASP runs read back from their checkpoints: `grasp runs`, `grasp show` and run reports."""

from __future__ import annotations

import argparse
import asyncio
from datetime import datetime
from typing import Any

from langgraph.types import StateSnapshot
from rich.markup import escape

from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.cli.ask_report import (
    AgentTrace,
    resolved_sub_question,
    short,
    summarize,
    summary_lines,
    tokens_text,
)
from graphs.runtime.checkpoints import (
    last_run,
    latest_threads,
    open_checkpointer,
    read_steps,
    sub_agent_namespace,
)
from graphs.runtime.services import resolve_database_url
from graphs.runtime.settings import Settings


class Refused(RuntimeError):
    """The command cannot go on as asked (another question on a used thread, no such thread)."""


def say(line: str = "") -> None:
    """Print plain text: no markup taken from user text, no wrapping (people and tests parse it)."""
    from graphs.cli.main import console

    console.print(escape(line), soft_wrap=True, highlight=False)


def status_of(snapshot: StateSnapshot) -> str:
    """done, failed (a step raised) or unfinished (interrupted, or still running)."""
    if any(task.error for task in snapshot.tasks):
        return "failed"
    if snapshot.next:
        return "unfinished"
    return "done"


def step_of(snapshot: StateSnapshot) -> int:
    """The superstep a checkpoint was taken after (-1: the input checkpoint)."""
    metadata: dict[str, Any] = dict(snapshot.metadata or {})
    return int(metadata.get("step", -1))


def run_span(steps: list[StateSnapshot]) -> float | None:
    """Seconds from a run's first checkpoint to its last (its wall time, pauses included)."""
    if len(steps) < 2 or not steps[0].created_at or not steps[-1].created_at:
        return None
    first = datetime.fromisoformat(steps[0].created_at)
    return (datetime.fromisoformat(steps[-1].created_at) - first).total_seconds()


async def agent_traces(graph: GraspGraph, thread: str) -> list[AgentTrace]:
    """Every sub-agent's rounds in the thread's latest run, read back from the checkpoints."""
    traces: list[AgentTrace] = []
    steps = last_run(await read_steps(graph, thread))
    final = steps[-1].values if steps else {}
    for snapshot in steps:
        for task in snapshot.tasks:
            if task.name != "sub_agent":
                continue
            sub_steps = await read_steps(graph, thread, sub_agent_namespace(task.id))
            values = next((s.values for s in sub_steps if "index" in s.values), None)
            if values is None:
                continue
            trace = AgentTrace(values["index"], resolved_sub_question(final, values["index"]))
            for sub in sub_steps:
                for sub_task in sub.tasks:
                    trace.record(sub_task.name, sub_task.result)
            trace.tokens = sub_steps[-1].values.get("tokens", {})
            traces.append(trace)
    return sorted(traces, key=lambda t: t.index)


async def report(
    graph: GraspGraph, thread: str, wall_s: float | None, wall_note: str = ""
) -> dict[str, Any]:
    """Print the sub-agents' rounds and the run's summary; return the final values."""
    values = dict((await graph.aget_state({"configurable": {"thread_id": thread}})).values)
    for trace in await agent_traces(graph, thread):
        for line in trace.lines():
            say(line)
    for line in summary_lines(values, wall_s, wall_note):
        say(line)
    return values


async def run_runs(args: argparse.Namespace) -> int:
    """List the latest threads with their question, answer, tokens and status."""
    url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
    async with open_checkpointer(url) as saver:
        graph = build_grasp_graph(None, saver)
        rows = await latest_threads(saver, args.limit)
        if not rows:
            say("no runs yet")
        for row in rows:
            snapshot = await graph.aget_state({"configurable": {"thread_id": row.thread_id}})
            values = snapshot.values
            status = status_of(snapshot)
            answer = values.get("final_answer") if status == "done" else None
            say(
                f"{row.thread_id}  {status}  {row.created_at[:19]}  "
                f"{tokens_text(values.get('tokens'))}"
            )
            say(f"  question: {short(values.get('question', '?'), 120)}")
            say(f"  answer: {short(answer or status, 120)}")
    return 0


async def run_show(args: argparse.Namespace) -> int:
    """Print every step of a thread: which node(s) wrote, what, and the token tally after it."""
    url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
    async with open_checkpointer(url) as saver:
        graph = build_grasp_graph(None, saver)
        steps = await read_steps(graph, args.thread)
        if not steps:
            raise Refused(f"no checkpoints for thread {args.thread}")
        say(f"thread {args.thread}: {len(steps)} checkpoints")
        for i, snapshot in enumerate(steps):
            after = steps[i + 1].values.get("tokens") if i + 1 < len(steps) else None
            step = step_of(snapshot) + 1
            for task in snapshot.tasks:
                if task.error:
                    text = f"failed: {short(str(task.error), 100)}"
                elif task.result is None:
                    text = "(not run yet)"
                else:
                    text = summarize(task.name, task.result)
                tally = f"  | so far {tokens_text(after)}" if after is not None else ""
                say(f"step {step:>3}  {task.name:<11} {text}{tally}")
                if task.name == "sub_agent":
                    await show_sub_agent(graph, args.thread, task.id)
        say(f"status: {status_of(steps[-1])}")
    return 0


async def show_sub_agent(graph: GraspGraph, thread: str, task_id: str) -> None:
    """The steps of one sub-agent, indented under the parent step that ran it."""
    sub_steps = await read_steps(graph, thread, sub_agent_namespace(task_id))
    names: dict[int, str] = {}
    for i, snapshot in enumerate(sub_steps):
        after = sub_steps[i + 1].values.get("tokens") if i + 1 < len(sub_steps) else None
        for task in snapshot.tasks:
            if task.name == "__start__":
                continue
            result = task.result if isinstance(task.result, dict) else {}
            # Selection names ids; the names come from the search step before it.
            names.update({c["id"]: c["name"] for c in result.get("candidates", [])})
            text = summarize(task.name, result, names) if task.result is not None else "(not run)"
            index = snapshot.values.get("index", "?")
            tally = f"  | sq{index} so far {tokens_text(after)}" if after else ""
            say(f"           sq{index} · {task.name:<15} {text}{tally}")
