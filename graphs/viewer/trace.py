"""A run's page content read back from its checkpoints: steps, calls, incidents, GRASP's plan and rounds.

Generic first: every graph's run shows its supersteps, each node's write summary, its LLM calls
(from the `tokens` tally a node writes, the project's convention) and its errors; a subgraph node's
own steps are read from its checkpoint namespace (`name:task_id`). A GRASP run adds its plan DAG
and each sub-agent's rounds.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot

from graphs.runtime.branches import Checkpoint, branches_of
from graphs.runtime.checkpoints import ATTEMPT_KEY, on_branch, read_all_steps
from graphs.runtime.run_history import run_span, status_of, step_of
from graphs.viewer.model import AgentView, CallView, Incident, PlanNode, RunView, TurnView
from graphs.viewer.rounds import fold_round
from graphs.viewer.steps import call_view, error_text, records_of, steps_of, token_sums

#: Metadata keys that name one invocation: a change between checkpoints marks a resumption.
INVOCATION_KEYS = ("run_id", ATTEMPT_KEY)
#: Metadata that is bookkeeping, not a setting (the CLI's grasp_* keys and a dev server's
#: context fields are settings; its ids and langgraph_* keys are not).
NOT_SETTINGS = frozenset(
    {"step", "source", "parents", "writes", "thread_id", "run_id", "run_attempt", "user_id"}
    | {"created_by", "assistant_id", "grasp_question", ATTEMPT_KEY}
)


#: A thread's steps, every branch's, oldest first, by checkpoint namespace ("" the parent graph).
StepLoader = Callable[[str], Awaitable[list[StateSnapshot]]]


class NoSuchThread(LookupError):
    """The thread has no checkpoints."""


@dataclass(frozen=True)
class SubRun:
    """A subgraph node's run: its parent task and its own steps."""

    step: int
    task_id: str
    name: str
    finished: bool
    error: str
    steps: list[StateSnapshot]


async def sub_runs(load: StepLoader, run: list[StateSnapshot]) -> list[SubRun]:
    """Every task of the run that ran a subgraph (it has checkpoints under `name:task_id`)."""
    found: list[SubRun] = []
    for snapshot in run:
        for task in snapshot.tasks:
            if task.name.startswith("__"):
                continue
            inner = await load(f"{task.name}:{task.id}")
            if inner:
                found.append(
                    SubRun(
                        step_of(snapshot) + 1,
                        task.id,
                        task.name,
                        task.result is not None,
                        error_text(task.error),
                        inner,
                    )
                )
    return found


def is_setting(key: str, value: Any) -> bool:
    """Whether a metadata entry is a run setting worth showing."""
    bookkeeping = key in NOT_SETTINGS or key.startswith(("langgraph_", "x-"))
    return not bookkeeping and isinstance(value, str | int | float | bool)


def run_settings(run: list[StateSnapshot]) -> dict[str, Any]:
    """The settings the run's checkpoints carry in their metadata."""
    metadata: dict[str, Any] = dict(run[0].metadata or {}) if run else {}
    settings: dict[str, Any] = {}
    for key, value in metadata.items():
        if key == "grasp_settings" and isinstance(value, str):
            try:
                settings.update(json.loads(value) or {})
            except json.JSONDecodeError:
                settings[key] = value
        elif is_setting(key, value):
            settings[key.removeprefix("grasp_")] = value
    return settings


def incidents_of(run: list[StateSnapshot], subs: list[SubRun]) -> list[Incident]:
    """Errors where a step failed, and where the run was picked up again."""
    found: list[Incident] = []
    last = len(run) - 1
    for i, snapshot in enumerate(run):
        step = step_of(snapshot) + 1
        for task in snapshot.tasks:
            if task.error is None:
                continue
            found.append(Incident("error", step, f"{task.name}: {error_text(task.error)}"))
            if i < last or task.result is not None:
                found.append(Incident("resumed", step, f"{task.name} ran again after the error"))
        if i > 0:
            before, now = dict(run[i - 1].metadata or {}), dict(snapshot.metadata or {})
            for key in INVOCATION_KEYS:
                if key in before and key in now and before[key] != now[key]:
                    # This checkpoint holds the first step the new invocation ran.
                    text = f"a new invocation went on from here ({key} {now[key]})"
                    found.append(Incident("resumed", step - 1, text))
    for sub in subs:
        label = sub_label(sub)
        for inner in sub.steps:
            for task in inner.tasks:
                if task.error is not None:
                    text = f"{label} · {task.name}: {error_text(task.error)}"
                    found.append(Incident("error", sub.step, text))
    if run and run[-1].values.get("error"):
        found.append(Incident("error", 1, f"note: {run[-1].values['error']}"))
    return sorted(found, key=lambda incident: incident.step)


def sub_label(sub: SubRun) -> str:
    """'sq2' for a GRASP sub-agent, else the node's name."""
    for inner in sub.steps:
        if "index" in inner.values:
            return f"sq{inner.values['index']}"
    return sub.name


def calls_of(run: list[StateSnapshot], subs: list[SubRun]) -> list[CallView]:
    """Every LLM call of the run by the step that made it (a subgraph's calls from its own steps)."""
    by_task = {sub.task_id: sub for sub in subs}
    calls: list[CallView] = []
    for snapshot in run:
        step = step_of(snapshot) + 1
        for task in snapshot.tasks:
            sub = by_task.get(task.id)
            if sub is None:
                calls += [call_view(step, r, True) for r in records_of(task.result)]
                continue
            for inner in sub.steps:
                for inner_task in inner.tasks:
                    records = records_of(inner_task.result)
                    calls += [call_view(step, r, sub.finished) for r in records]
    return calls


def grasp_parts(view: RunView, subs: list[SubRun]) -> None:
    """The plan DAG (with the superstep each sub-question ran in) and every sub-agent's rounds."""
    values = view.values
    answers = {int(k): str(v) for k, v in values.get("answers", {}).items()}
    ran_at: dict[int, int] = {}
    for sub in subs:
        if sub.name != "sub_agent":
            continue
        first = next((s.values for s in sub.steps if "index" in s.values), None)
        if first is None:
            continue
        index = int(first["index"])
        ran_at[index] = sub.step
        agent = AgentView(
            index=index,
            sub_question=str(first.get("sub_question", "")),
            step=sub.step,
            status="failed" if sub.error else "done" if sub.finished else "unfinished",
            error=sub.error,
            dependencies=[
                (str(d["sub_question"]), str(d["answer"])) for d in first.get("dependencies", [])
            ],
        )
        for inner in sub.steps:
            for task in inner.tasks:
                fold_round(agent.rounds, task.name, task.result)
                tokens_in, tokens_out = token_sums(task.result)
                agent.input_tokens += tokens_in
                agent.output_tokens += tokens_out
        agent.rounds = [r for r in agent.rounds if r.reached]
        view.agents.append(agent)
    view.agents.sort(key=lambda a: (a.index, a.step))
    view.plan_nodes = [
        PlanNode(
            int(sq["index"]),
            str(sq["text"]),
            [int(k) for k in sq.get("depends_on", [])],
            ran_at.get(int(sq["index"])),
            answers.get(int(sq["index"])),
        )
        for sq in values.get("sub_questions", [])
    ]


def checkpoint_loader(graph: Pregel[Any, Any, Any, Any], thread: str) -> StepLoader:
    """Steps read from the graph's checkpointer (our database: CLI, eval and dev-server runs)."""

    async def load(namespace: str) -> list[StateSnapshot]:
        return (await read_all_steps(graph, thread, namespace))[::-1]

    return load


def runs_of(steps: list[StateSnapshot]) -> list[list[StateSnapshot]]:
    """A thread's runs in order, each starting at an input checkpoint.

    A new question or a new turn of a conversation adds one; a killed-and-resumed run adds none,
    so it stays one run.
    """
    starts = [i for i, s in enumerate(steps) if (s.metadata or {}).get("source") == "input"]
    if not starts:
        return [steps]
    bounds = [*starts[1:], len(steps)]
    return [steps[a:b] for a, b in zip(starts, bounds, strict=True)]


def turn_view(number: int, run: list[StateSnapshot]) -> TurnView:
    """What a turn asked and answered, and its own token tally."""
    values = dict(run[-1].values)
    tokens = dict(values.get("tokens", {}) or {})
    return TurnView(
        number=number,
        question=str(values.get("question", "")),
        answer=str(values.get("final_answer", "") or ""),
        status=status_of(run[-1]),
        input_tokens=int(tokens.get("input_tokens", 0)),
        output_tokens=int(tokens.get("output_tokens", 0)),
    )


async def build_run_view(
    load: StepLoader, graph_name: str, thread: str, turn: int | None = None
) -> RunView:
    """The page content of one run of the thread: turn `turn` (1-based), else the latest."""
    every = await load("")
    if not every:
        raise NoSuchThread(f"no checkpoints for thread {thread}")
    branches = branches_of([Checkpoint.of_snapshot(s) for s in every])
    every = on_branch(every[::-1])  # the latest branch: a fork's steps without the original's
    runs = runs_of(every)
    if turn is not None and not 1 <= turn <= len(runs):
        raise NoSuchThread(f"thread {thread} has {len(runs)} turn(s); there is no turn {turn}")
    number = turn or len(runs)
    run = runs[number - 1]
    values = dict(run[-1].values)
    subs = await sub_runs(load, run)
    view = RunView(
        thread=thread,
        graph=graph_name,
        status=status_of(run[-1]),
        question=str(values.get("question", "")),
        answer=str(values.get("final_answer", "") or ""),
        justification=str(values.get("justification", "") or ""),
        plan=str(values.get("plan", "") or ""),
        steps=steps_of(graph_name, run),
        calls=calls_of(run, subs),
        incidents=incidents_of(run, subs),
        settings=run_settings(run),
        tally=dict(values.get("tokens", {}) or {}),
        earlier_runs=number - 1,
        turn=number,
        turns=[turn_view(n, r) for n, r in enumerate(runs, start=1)],
        wall_s=run_span(run),
        values=values,
        branches=branches,
        citations=values.get("citations") if values.get("final_answer") else None,
    )
    if "sub_questions" in values:
        grasp_parts(view, subs)
    return view
