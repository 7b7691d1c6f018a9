"""`grasp ask` (resumable through PostgreSQL checkpoints), and the `runs` and `show` commands.

`ask` prints the thread id first; re-running it with `--thread` continues an interrupted run
from its last checkpoint, or prints a finished one without calling the model. It shows progress
by default: the plan, then one line per node as it finishes (`--stream` is that default, kept
for old scripts; `--quiet` leaves only the plan and the result). An empty question, an unknown
corpus, one indexed by another embedder, or an ill-typed `--set` is refused in one line before
any thread exists. `--method` picks
any answering method of graphs/peers/registry.py (GRASP by default); every one is checkpointed
the same way, and its thread records which method ran it.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

from rich.markup import escape

from graphs.agent.graph import build_grasp_graph
from graphs.api import make_context
from graphs.cli.ask_input import (
    check_corpus,
    check_question,
    overrides_of,
    run_config,
)
from graphs.cli.ask_progress import LivePrinter
from graphs.cli.ask_report import plan_lines
from graphs.cli.ask_resume import resume_command, resume_plan
from graphs.cli.run_stream import drive
from graphs.peers.registry import DEFAULT_METHOD, METHODS, build_method_graph, method_context
from graphs.runtime.checkpoints import (
    last_run,
    open_checkpointer,
    read_steps,
)
from graphs.runtime.run_history import (
    Refused,
    describe,
    report,
    run_runs,
    run_show,
    run_span,
    say,
    step_of,
)
from graphs.runtime.services import Services, services_for
from graphs.runtime.settings import Settings


def register(sub: Any) -> None:
    """Add the `ask`, `runs` and `show` commands."""
    ask = sub.add_parser("ask", help="answer a question with GRASP or a peer method (resumable)")
    ask.add_argument("question")
    ask.add_argument("--corpus", required=True, help="the indexed corpus to answer from")
    ask.add_argument(
        "--method",
        choices=list(METHODS),
        default=DEFAULT_METHOD,
        help="the answering method (default: grasp)",
    )
    ask.add_argument(
        "--thread", help="thread id: resume an interrupted run, or show a finished one"
    )
    shown = ask.add_mutually_exclusive_group()
    shown.add_argument(
        "--stream",
        action="store_true",
        help="print every node's result live (the default; kept for old scripts)",
    )
    shown.add_argument(
        "--quiet",
        action="store_true",
        help="print only the thread, the plan and the result, not each node as it finishes",
    )
    ask.add_argument(
        "--review",
        action="store_true",
        help="GRASP: pause after the planner to accept, edit (in $EDITOR) or comment on the plan",
    )
    ask.add_argument("--max-iterations", type=int, help="GRASP: search rounds per sub-agent")
    ask.add_argument("--planner", choices=["on", "off"], help="GRASP only")
    ask.add_argument("--entity-selection", choices=["llm", "off"], help="GRASP only")
    ask.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any field of the method's Context, e.g. --set k_passages=3 (repeatable)",
    )
    ask.set_defaults(handler=handle_ask)

    runs = sub.add_parser("runs", help="list past runs from the checkpoints")
    runs.add_argument("--limit", type=int, default=20)
    runs.set_defaults(handler=handle_runs)

    show = sub.add_parser("show", help="print a run's step history from its checkpoints")
    show.add_argument("thread")
    show.set_defaults(handler=handle_show)


async def run_ask(args: argparse.Namespace) -> int:
    """Start, resume or replay the run of `args.question` on its thread."""
    thread = args.thread
    # Bad input is refused before the thread line: nothing ran, so there is nothing to resume.
    check_question(args.question)
    settings = overrides_of(args)
    if getattr(args, "review", False):
        settings["review_plan"] = True  # a GRASP setting: a peer's context refuses it
    method = getattr(args, "method", DEFAULT_METHOD)
    if method == DEFAULT_METHOD:
        make_context(args.corpus, **settings)  # bad settings fail before any work
    else:
        method_context(method, args.corpus, **settings)
    services = await asyncio.to_thread(services_for, Settings.from_env())
    await asyncio.to_thread(check_corpus, services, args.corpus)
    say(f"thread: {thread}")  # first of the run, so an interrupted run can be resumed with it
    if method != DEFAULT_METHOD:
        return await run_peer_ask(args, settings, services)
    async with open_checkpointer(services.database_url) as saver:
        # Services are resolved per run from the context (its chat_model may differ).
        graph = build_grasp_graph(None, saver)
        config = run_config(thread, args.question, args.corpus, settings, DEFAULT_METHOD)
        snapshot = await graph.aget_state(config)
        kind, settings = resume_plan(snapshot, args.question, args.corpus, settings)
        if kind == "finished":
            say("this thread has already answered the question; no model is called")
            for line in plan_lines(snapshot.values):
                say(line)
            span = run_span(last_run(await read_steps(graph, thread)))
            await report(graph, thread, span, " (first to last checkpoint)")
            return 0
        if kind == "resume":
            step = step_of(snapshot)
            say(f"resuming at step {step + 1} (next: {', '.join(snapshot.next)})")
            if snapshot.values.get("plan") is not None:
                for line in plan_lines(snapshot.values):
                    say(line)
        printer = LivePrinter(stream=not args.quiet)
        started = time.monotonic()
        run_input = None if kind == "resume" else {"question": args.question}
        try:
            await drive(graph, run_input, config, make_context(args.corpus, **settings), printer)
        except Exception as exc:  # the run stops; what finished is saved
            return stopped(exc, args)
        values = await report(graph, thread, time.monotonic() - started)
    return finished(values, thread)


async def run_peer_ask(
    args: argparse.Namespace, settings: dict[str, Any], services: Services
) -> int:
    """Start, resume or replay a peer method's run of `args.question` on its thread."""
    method, thread = args.method, args.thread
    async with open_checkpointer(services.database_url) as saver:
        graph = build_method_graph(method, None, saver)
        config = run_config(thread, args.question, args.corpus, settings, method)
        snapshot = await graph.aget_state(config)
        kind, settings = resume_plan(snapshot, args.question, args.corpus, settings, method)
        if kind == "finished":
            say("this thread has already answered the question; no model is called")
            span = run_span(last_run(await read_steps(graph, thread)))
            await report(graph, thread, span, " (first to last checkpoint)")
            return 0
        if kind == "resume":
            say(f"resuming at step {step_of(snapshot) + 1} (next: {', '.join(snapshot.next)})")
        started = time.monotonic()
        try:
            async for event in graph.astream(
                None if kind == "resume" else {"question": args.question},
                config,
                context=method_context(method, args.corpus, **settings),
                stream_mode="tasks",
                durability="sync",  # each step saved before the next starts, as for GRASP
            ):
                if event.get("error"):
                    say(f"{event['name']} failed: {event['error']}")
                elif not args.quiet and "result" in event and event["name"] != "__start__":
                    say(f"[{event['name']}] {describe(method, event['name'], event['result'])}")
        except Exception as exc:  # the run stops; what finished is saved
            return stopped(exc, args)
        values = await report(graph, thread, time.monotonic() - started)
    return finished(values, thread)


def stopped(exc: Exception, args: argparse.Namespace) -> int:
    """Say in one line why the run stopped and how to continue it; exit code 1."""
    from graphs.cli.main import errors, one_line

    reason = f"the run stopped: {one_line(exc)}; continue it with: {resume_command(args)}"
    errors.print(escape(reason), soft_wrap=True)
    return 1


def finished(values: dict[str, Any], thread: str) -> int:
    """Point to the run's page; exit code 0 when it produced an answer."""
    say(f"see the run: grasp view {thread} --open")
    return 0 if values.get("final_answer") else 1


def handle_ask(args: argparse.Namespace) -> int:
    """`grasp ask`: run it on a fixed thread id, so an interrupt can say how to continue."""
    from graphs.cli.main import errors

    # Fixed here, not in run_ask, so an interrupt can name the thread to continue.
    args.thread = args.thread or str(uuid.uuid4())
    try:
        return _run(run_ask(args))
    except KeyboardInterrupt:
        errors.print(
            escape(f"interrupted; finished steps are saved. Continue with: {resume_command(args)}"),
            soft_wrap=True,
        )
        return 130


def handle_runs(args: argparse.Namespace) -> int:
    """`grasp runs`: list past runs from the checkpoints."""
    return _run(run_runs(args))


def handle_show(args: argparse.Namespace) -> int:
    """`grasp show`: print one thread's steps from its checkpoints."""
    return _run(run_show(args))


def _run(coroutine: Any) -> int:
    from graphs.cli.main import errors

    try:
        return int(asyncio.run(coroutine))
    except Refused as exc:
        errors.print(escape(f"refused: {exc}"), soft_wrap=True)
        return 2
