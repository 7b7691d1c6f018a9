"""`grasp fork THREAD --at STEP`: run a GRASP run again from its plan, a hop or its synthesis.

The branch grows beside the original on the same thread (graphs/agent/fork.py): nothing before
STEP is asked or paid again. `--set` changes settings from the run's own; `--question` rewords
the question (at plan) or the hop (at sqK). The branches are printed side by side at the end, as
`grasp show` and the run page show them.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import time
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from rich.markup import escape

from graphs.agent.context import GraspContext
from graphs.agent.fork import (
    ForkPlan,
    ForkRefused,
    fork_metadata,
    plan_fork,
    run_settings,
    start_fork,
)
from graphs.agent.graph import GraspGraph, build_grasp_graph
from graphs.api import make_context
from graphs.cli.ask import finished
from graphs.cli.ask_input import run_config, set_items
from graphs.cli.ask_progress import LivePrinter
from graphs.cli.run_stream import drive
from graphs.peers.registry import DEFAULT_METHOD
from graphs.runtime.branches import (
    Checkpoint,
    branch_lines,
    branches_of,
    chain_to,
    thread_branches,
)
from graphs.runtime.checkpoints import open_checkpointer, read_all_steps
from graphs.runtime.run_history import Refused, report, say, thread_method
from graphs.runtime.services import resolve_database_url
from graphs.runtime.settings import Settings


def register(sub: Any) -> None:
    """Add the `fork` command."""
    fork = sub.add_parser(
        "fork", help="run a GRASP run again from its plan, a hop or its synthesis, as a branch"
    )
    fork.add_argument("thread", help="the run's thread id (see `grasp runs`)")
    fork.add_argument(
        "--at", required=True, metavar="STEP", help="plan, sqK (hop K, e.g. sq2) or synthesis"
    )
    fork.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting changed from the run's, e.g. --set k_passages=10 (repeatable)",
    )
    fork.add_argument(
        "--question", help="at plan: the question asked instead; at sqK: hop K's new wording"
    )
    fork.add_argument("--quiet", action="store_true", help="print only the plan and the result")
    fork.set_defaults(handler=handle_fork)


async def thread_checkpoints(graph: GraspGraph, thread: str) -> list[Checkpoint]:
    """Every checkpoint of the thread's parent graph, every branch's."""
    return [Checkpoint.of_snapshot(s) for s in await read_all_steps(graph, thread)]


@dataclass(frozen=True)
class BegunFork:
    """A fork written to its thread, ready to run from `config` with `context`."""

    plan: ForkPlan
    corpus: str
    config: RunnableConfig
    context: GraspContext


async def begin_fork(
    graph: GraspGraph,
    thread: str,
    at: str,
    changed: dict[str, Any],
    question: str | None = None,
    *,
    from_original: bool = False,
) -> BegunFork:
    """Fork the thread at `at` with `changed` settings: its latest branch, or its original run.

    The branch keeps the forked run's corpus and settings, `changed` over them; bad settings are
    refused before anything is written.
    """
    checkpoints = await thread_checkpoints(graph, thread)
    if not checkpoints:
        raise Refused(f"no checkpoints for thread {thread}")
    chain = chain_to(checkpoints, branches_of(checkpoints)[0].leaf if from_original else None)
    try:
        plan = plan_fork(chain, at, question)
    except ForkRefused as exc:
        raise Refused(str(exc)) from None
    corpus, stored = run_settings(chain[-1].metadata)
    if corpus is None:
        raise Refused(f"thread {thread} does not record its corpus; it cannot be forked")
    settings = {**stored, **changed}
    context = make_context(corpus, **settings)  # bad settings fail before any work
    metadata = {
        **(run_config(thread, plan.question, corpus, settings).get("metadata") or {}),
        **fork_metadata(plan, changed, question),
    }
    config = await start_fork(graph, thread, plan, metadata)
    return BegunFork(plan, corpus, config, context)


async def run_fork(args: argparse.Namespace) -> int:
    """Fork the thread's latest branch at `args.at` and run the branch to its end."""
    from graphs.cli.main import errors, one_line

    changed = set_items(args.set, GraspContext)
    url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
    async with open_checkpointer(url) as saver:
        method = await thread_method(saver, args.thread)
        if method != DEFAULT_METHOD:
            raise Refused(f"thread {args.thread} was run by {method}; forks are of GRASP runs")
        graph = build_grasp_graph(None, saver)
        fork = await begin_fork(graph, args.thread, args.at, changed, args.question)
        plan, corpus, config, context = fork.plan, fork.corpus, fork.config, fork.context
        say(f"thread: {args.thread}")
        shown = ", ".join(f"{k}={v}" for k, v in sorted(changed.items())) or "the run's settings"
        say(f"fork at {plan.at} from checkpoint {plan.checkpoint_id}, with {shown}")
        started = time.monotonic()
        try:
            await drive(graph, None, config, context, LivePrinter(stream=not args.quiet))
        except Exception as exc:  # the branch stops; what finished is saved
            go_on = f"grasp ask {shlex.quote(plan.question)} --corpus {shlex.quote(corpus)}"
            reason = f"the fork stopped: {one_line(exc)}; continue it with: {go_on}"
            errors.print(escape(f"{reason} --thread {args.thread}"), soft_wrap=True)
            return 1
        values = await report(graph, args.thread, time.monotonic() - started)
        for line in branch_lines(await thread_branches(graph, args.thread)):
            say(line)
    return finished(values, args.thread)


def handle_fork(args: argparse.Namespace) -> int:
    """`grasp fork`: a refusal is one line and exit code 2, as for `grasp ask`."""
    from graphs.cli.main import errors

    try:
        return int(asyncio.run(run_fork(args)))
    except Refused as exc:
        errors.print(escape(f"refused: {exc}"), soft_wrap=True)
        return 2
