"""A thread's steps read over a LangGraph server's HTTP API (`grasp view --server URL`).

For a server whose checkpoints are not in our database (a deployment, or `langgraph dev` run with
another checkpointer); `langgraph dev` as configured here checkpoints into our database, where
`grasp view THREAD` reads the thread directly. The ledger is not served over HTTP, so a page read
this way has no ledger line.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.types import PregelTask, StateSnapshot
from langgraph_sdk import get_client
from langgraph_sdk.schema import Checkpoint

from graphs.viewer.trace import NoSuchThread, StepLoader

#: The most checkpoints read per namespace (a GRASP run has a few dozen per sub-agent).
HISTORY_LIMIT = 1000


def snapshot_of(state: dict[str, Any]) -> StateSnapshot:
    """The server's JSON thread state as the StateSnapshot a checkpointer would give."""
    checkpoint = dict(state.get("checkpoint") or {})
    parent = state.get("parent_checkpoint")
    tasks = tuple(
        PregelTask(
            id=str(t["id"]),
            name=str(t["name"]),
            path=(),
            # Over HTTP an error is its text; the viewer prints it as such.
            error=cast(Exception | None, t.get("error")),
            interrupts=(),
            state=None,
            result=t.get("result"),
        )
        for t in state.get("tasks", [])
    )
    return StateSnapshot(
        values=dict(state.get("values") or {}),
        next=tuple(state.get("next", [])),
        config={"configurable": checkpoint},
        metadata=cast(Any, state.get("metadata") or {}),
        created_at=state.get("created_at"),
        parent_config={"configurable": dict(parent)} if parent else None,
        tasks=tasks,
        interrupts=(),
    )


async def server_source(url: str, thread: str) -> tuple[StepLoader, str]:
    """A step loader over the server's thread history, and the graph the server ran."""
    client = get_client(url=url)

    async def load(namespace: str) -> list[StateSnapshot]:
        # The API wants only the keys it is given (a null checkpoint_id is refused).
        where = cast(Checkpoint, {"checkpoint_ns": namespace})
        history = await client.threads.get_history(thread, limit=HISTORY_LIMIT, checkpoint=where)
        return [snapshot_of(dict(state)) for state in reversed(history)]

    latest = await load("")
    if not latest:
        raise NoSuchThread(f"no checkpoints for thread {thread!r} on {url}")
    graph = (latest[-1].metadata or {}).get("graph_id")
    return load, str(graph or "graph")
