"""The PostgreSQL checkpointer that makes GRASP runs resumable, kept in the run's own database.

The checkpoint tables (CHECKPOINT_TABLES) are created by langgraph-checkpoint-postgres's own
migrations (`setup()`), not by alembic; alembic/env.py leaves them out of its comparisons.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.pregel import Pregel
from langgraph.types import StateSnapshot
from psycopg import AsyncConnection, AsyncCursor
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from graphs.runtime.services import resolve_database_url
from graphs.runtime.settings import Settings
from store.checkpoint_reads import ThreadRow
from store.checkpoint_reads import latest_threads as store_latest_threads
from store.engine import libpq_url

CHECKPOINT_TABLES = frozenset(
    {"checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"}
)

# Databases whose checkpoint tables this process has already created or checked.
_set_up: set[str] = set()

#: How LangGraph marks the first checkpoint of a branch: written by update_state, or a replay.
FORK_SOURCES = ("update", "fork")

#: Checkpoint metadata key holding one id per invocation of a run, so a resumption is visible.
ATTEMPT_KEY = "grasp_attempt"


async def ensure_setup(saver: AsyncPostgresSaver, database_url: str) -> None:
    """Run the library's migrations once per database and process."""
    if database_url not in _set_up:
        await saver.setup()
        _set_up.add(database_url)


@asynccontextmanager
async def cursor_of(saver: AsyncPostgresSaver) -> AsyncIterator[AsyncCursor[DictRow]]:
    """A dict-row cursor on the saver's connection or pool, for read-only listings."""
    conn = saver.conn
    if isinstance(conn, AsyncConnectionPool):
        async with conn.connection() as pooled, pooled.cursor(row_factory=dict_row) as cursor:
            yield cursor
    else:
        # One shared connection: take the saver's lock so no checkpoint write interleaves.
        async with saver.lock, conn.cursor(row_factory=dict_row) as cursor:
            yield cursor


@asynccontextmanager
async def open_checkpointer(database_url: str) -> AsyncIterator[AsyncPostgresSaver]:
    """A Postgres saver on one connection (autocommit, no prepared statements, as it needs)."""
    url = libpq_url(database_url)
    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        await ensure_setup(saver, url)
        yield saver


@asynccontextmanager
async def dev_checkpointer() -> AsyncIterator[AsyncPostgresSaver]:
    """The `langgraph dev` checkpointer (langgraph.json "checkpointer.path").

    A pool rather than one connection: the server lives long and runs many threads at once.
    The database is the environment's (DATABASE_URL, else the embedded server).
    """
    url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
    pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=8,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    try:
        saver = AsyncPostgresSaver(conn=pool)
        await ensure_setup(saver, url)
        yield saver
    finally:
        await pool.close()


async def latest_threads(saver: AsyncPostgresSaver, limit: int) -> list[ThreadRow]:
    """The `limit` most recently checkpointed threads, newest first."""
    async with cursor_of(saver) as cursor:
        return await store_latest_threads(cursor, limit)


async def read_all_steps(
    graph: Pregel[Any, Any, Any, Any], thread_id: str, namespace: str = ""
) -> list[StateSnapshot]:
    """Every checkpoint of a thread's namespace ("" the parent), every branch's, newest first."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": namespace}}
    return [s async for s in graph.aget_state_history(config)]


def checkpoint_id(config: RunnableConfig | None) -> str | None:
    """The checkpoint id a snapshot's config (or parent config) names."""
    return (config or {}).get("configurable", {}).get("checkpoint_id")


def on_branch(newest_first: list[StateSnapshot], leaf: str | None = None) -> list[StateSnapshot]:
    """The checkpoints from the thread's first to `leaf` (default: its latest), oldest first.

    A fork (`grasp fork`, Studio, update_state) starts a branch beside the checkpoints it grew
    from; following parents from the leaf keeps one branch. Without forks this is every checkpoint.
    The checkpoint a fork grew from keeps the tasks another branch ran after it: here it has none.
    """
    by_id = {checkpoint_id(s.config): s for s in newest_first}
    current = by_id.get(leaf) if leaf else (newest_first[0] if newest_first else None)
    chain: list[StateSnapshot] = []
    while current is not None:
        if chain and (chain[-1].metadata or {}).get("source") in FORK_SOURCES:
            current = current._replace(tasks=())
        chain.append(current)
        current = by_id.get(checkpoint_id(current.parent_config))
    return chain[::-1]


async def read_steps(
    graph: Pregel[Any, Any, Any, Any], thread_id: str, namespace: str = ""
) -> list[StateSnapshot]:
    """A thread's checkpoints on its latest branch ("" the parent's, else one sub-agent's).

    Oldest first. Each snapshot's `tasks` ran right after it, with their writes in `task.result`.
    """
    return on_branch(await read_all_steps(graph, thread_id, namespace))


def last_run(steps: list[StateSnapshot]) -> list[StateSnapshot]:
    """The steps of the thread's latest run: from its last input checkpoint on.

    A resumed run adds no input checkpoint, so a killed-and-resumed run counts as one.
    """
    starts = [i for i, s in enumerate(steps) if (s.metadata or {}).get("source") == "input"]
    return steps[starts[-1] :] if starts else steps


def sub_agent_namespace(task_id: str) -> str:
    """The checkpoint namespace of the sub-agent run by parent task `task_id`."""
    return f"sub_agent:{task_id}"
