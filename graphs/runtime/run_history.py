"""Past runs read back from their checkpoints: `grasp runs`, `grasp show` and run reports.

A run's config metadata names the method whose graph ran it (METHOD_KEY; threads without it are
GRASP's), and each thread is read back with that method's graph.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import datetime
from typing import Any

from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot
from rich.markup import escape

from graphs.agent.chat_messages import given_question
from graphs.agent.graph import GraspGraph
from graphs.cli.ask_report import (
    AgentTrace,
    listing,
    resolved_sub_question,
    short,
    summarize,
    summary_lines,
    tokens_text,
)
from graphs.peers.registry import DEFAULT_METHOD, build_method_graph
from graphs.runtime.branches import branch_lines, fork_note, thread_branches
from graphs.runtime.checkpoints import (
    last_run,
    latest_threads,
    open_checkpointer,
    read_steps,
    sub_agent_namespace,
)
from graphs.runtime.services import resolve_database_url
from graphs.runtime.settings import Settings

#: The config metadata key (copied into every checkpoint) that names a run's method.
METHOD_KEY = "grasp_method"

AnyGraph = CompiledStateGraph[Any, Any, Any, Any]


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
    graph: GraspGraph | AnyGraph, thread: str, wall_s: float | None, wall_note: str = ""
) -> dict[str, Any]:
    """Print the sub-agents' rounds and the run's summary; return the final values."""
    values = dict((await graph.aget_state({"configurable": {"thread_id": thread}})).values)
    for trace in await agent_traces(graph, thread):
        for line in trace.lines():
            say(line)
    for line in summary_lines(values, wall_s, wall_note):
        if line == "justification: (none)" and "justification" not in values:
            continue  # a peer: it writes no justification
        say(line)
    return values


async def run_runs(args: argparse.Namespace) -> int:
    """List the latest threads with their question, answer, tokens and status."""
    url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
    async with open_checkpointer(url) as saver:
        graphs = MethodGraphs(saver)
        rows = await latest_threads(saver, args.limit)
        if not rows:
            say("no runs yet")
        for row in rows:
            method = await thread_method(saver, row.thread_id)
            graph = graphs.get(method)
            snapshot = await graph.aget_state({"configurable": {"thread_id": row.thread_id}})
            values = snapshot.values
            status = status_of(snapshot)
            answer = values.get("final_answer") if status == "done" else None
            shown = "" if method == DEFAULT_METHOD else f"{method}  "
            say(
                f"{row.thread_id}  {status}  {row.created_at[:19]}  {shown}"
                f"{tokens_text(values.get('tokens'))}"
            )
            say(f"  question: {short(values.get('question', '?'), 120)}")
            say(f"  answer: {short(answer or status, 120)}")
    return 0


async def run_show(args: argparse.Namespace) -> int:
    """Print every step of a thread: which node(s) wrote, what, and the token tally after it."""
    url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
    async with open_checkpointer(url) as saver:
        method = await thread_method(saver, args.thread)
        graph = MethodGraphs(saver).get(method)
        steps = await read_steps(graph, args.thread)
        if not steps:
            raise Refused(f"no checkpoints for thread {args.thread}")
        shown = "" if method == DEFAULT_METHOD else f" · method {method}"
        say(f"thread {args.thread}: {len(steps)} checkpoints{shown}")
        # A conversation thread: every input checkpoint starts a turn, headed by its question.
        starts = [i for i, s in enumerate(steps) if (s.metadata or {}).get("source") == "input"]
        turn_of = {i: n for n, i in enumerate(starts, start=1)} if len(starts) > 1 else {}
        for i, snapshot in enumerate(steps):
            if i in turn_of:
                say(f"turn {turn_of[i]}: {short(str(input_question(snapshot)), 100)}")
            if note := fork_note(steps[i - 1] if i else None, snapshot):
                say(note)
            after = steps[i + 1].values.get("tokens") if i + 1 < len(steps) else None
            step = step_of(snapshot) + 1
            for task in snapshot.tasks:
                if task.error:
                    text = f"failed: {short(str(task.error), 100)}"
                elif task.result is None:
                    text = "(not run yet)"
                else:
                    text = describe(method, task.name, task.result)
                tally = f"  | so far {tokens_text(after)}" if after is not None else ""
                say(f"step {step:>3}  {task.name:<11} {text}{tally}")
                if task.name == "sub_agent" and method == DEFAULT_METHOD:
                    await show_sub_agent(graph, args.thread, task.id)
        for line in conversation_lines(steps[-1].values):
            say(line)
        for line in branch_lines(await thread_branches(graph, args.thread)):
            say(line)  # a forked run: its branches side by side
        say(f"status: {status_of(steps[-1])}")
    return 0


def input_question(snapshot: StateSnapshot) -> str:
    """The question an input checkpoint started a run with."""
    for task in snapshot.tasks:
        if task.name == "__start__" and isinstance(task.result, dict):
            return given_question(task.result) or "?"
    return "?"


def conversation_lines(values: dict[str, Any]) -> list[str]:
    """The finished turns of a conversation thread, in order, with their and the total tokens.

    Empty for a thread of one turn, whose steps already say everything.
    """
    turns = values.get("turns", [])
    if len(turns) < 2:
        return []
    lines = [f"conversation: {len(turns)} turns, {tokens_text(values.get('conversation_tokens'))}"]
    for n, turn in enumerate(turns, start=1):
        lines.append(
            f"  {n}. {short(turn['question'], 80)} → {short(turn['answer'], 60)}"
            f"  ({tokens_text(turn['tokens'])})"
        )
    return lines


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


async def thread_method(saver: AsyncPostgresSaver, thread: str) -> str:
    """The method that ran `thread`, from its latest checkpoint's metadata (GRASP when unnamed)."""
    saved = await saver.aget_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
    metadata: dict[str, Any] = dict(saved.metadata) if saved and saved.metadata else {}
    return str(metadata.get(METHOD_KEY) or DEFAULT_METHOD)


class MethodGraphs:
    """Each method's graph on one checkpointer, built on first use."""

    def __init__(self, saver: AsyncPostgresSaver) -> None:
        self.saver = saver
        self.built: dict[str, AnyGraph] = {}

    def get(self, method: str) -> AnyGraph:
        """The graph of `method` (an unknown method is refused: the thread cannot be read)."""
        if method not in self.built:
            try:
                self.built[method] = build_method_graph(method, None, self.saver)
            except ValueError as exc:
                raise Refused(str(exc)) from None
        return self.built[method]


def describe(method: str, node: str, write: Any) -> str:
    """A one-line summary of what `node` of `method` wrote."""
    if method == DEFAULT_METHOD or not isinstance(write, dict):
        return summarize(node, write)
    return peer_summary(node, write)


def ids_text(ids: list[int]) -> str:
    """'#3, #7' (cut after a few), or (none)."""
    return listing([f"#{i}" for i in ids])


def peer_summary(node: str, write: dict[str, Any]) -> str:
    """What a peer's node wrote, in one line."""
    if node == "start":
        return f"question: {short(write.get('question', ''))}"
    if write.get("error"):
        return f"error: {short(write['error'], 100)}"
    if "sub_questions" in write:
        subs = write["sub_questions"]
        return f"{len(subs)} sub-question{'' if len(subs) == 1 else 's'}: " + short(
            " | ".join(subs), 90
        )
    if "candidates" in write:
        return f"{len(write['candidates'])} candidates: {ids_text(write['candidates'])}"
    if node == "select" and "kept" in write:
        return f"round {write.get('round', '?')}, selector: kept {ids_text(write['kept'])}"
    if node == "add" and "kept" in write:
        return f"adder: kept {ids_text(write['kept'])}"
    if node == "think":
        settled = " (settled)" if write.get("done") else ""
        return f'step {write.get("step", "?")}: "{short(write.get("query", ""), 80)}"{settled}'
    if node == "ask_next" and write.get("notes"):
        return short(write["notes"][-1], 100)
    if "final_answer" in write:
        return f"answer: {short(write['final_answer'])}"
    if "passages" in write:
        return f"passages: {ids_text(write['passages'])}"
    return summarize(node, write)
