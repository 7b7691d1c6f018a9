"""A GRASP run driven from the terminal: its progress printed live, and each plan review asked.

`grasp ask` and `grasp fork` both run through `drive`: it streams the run's tasks and custom
events (the `tokens` events give the progress lines their running total) and, when the run pauses
for a plan review, shows the plan, reads the decision and resumes, until the run ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import Command

from graphs.cli.ask_progress import LivePrinter
from graphs.cli.ask_review import ask_reviewer, pending_review


async def drive(
    graph: Pregel[Any, Any, Any, Any],
    run_input: Any,
    config: RunnableConfig,
    context: Any,
    printer: LivePrinter,
    read: Callable[[str], str] = input,
) -> None:
    """Run from `config` (a thread, or a checkpoint of one) to the end, asking every review.

    Each step is saved before the next starts, so a kill loses at most the calls in flight.
    """
    thread = config["configurable"]["thread_id"]
    # A resume goes on from the thread's latest checkpoint, not from a fork's starting point.
    latest: RunnableConfig = {
        "configurable": {"thread_id": thread},
        "metadata": dict(config.get("metadata") or {}),
    }
    while True:
        async for part in graph.astream(
            run_input,
            config,
            context=context,
            # "tasks" rather than "updates": a sub-agent's updates stream only its output
            # channels, while a task's result holds all it wrote (search statement, …).
            stream_mode=["tasks", "custom"],
            subgraphs=True,
            durability="sync",
        ):
            namespace, mode, event = cast(tuple[Any, str, Any], part)
            printer.on_event(namespace, mode, event)
        request = pending_review(await graph.aget_state(latest))
        if request is None:
            return
        run_input, config = Command(resume=ask_reviewer(request, read)), latest
