"""Read-only listings over LangGraph's checkpoint tables (the saver owns their schema)."""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import AsyncCursor
from psycopg.rows import DictRow


@dataclass(frozen=True)
class ThreadRow:
    """A thread's latest top-level checkpoint."""

    thread_id: str
    checkpoint_id: str
    created_at: str


# Checkpoint ids are uuid6 (time-ordered): a thread's greatest id is its latest checkpoint.
LATEST_THREADS = """
SELECT thread_id, checkpoint_id, created_at FROM (
    SELECT DISTINCT ON (thread_id) thread_id, checkpoint_id, checkpoint->>'ts' AS created_at
    FROM checkpoints
    WHERE checkpoint_ns = ''
    ORDER BY thread_id, checkpoint_id DESC
) AS latest
ORDER BY checkpoint_id DESC
LIMIT %s
"""


async def latest_threads(cursor: AsyncCursor[DictRow], limit: int) -> list[ThreadRow]:
    """The `limit` most recently checkpointed threads, newest first."""
    await cursor.execute(LATEST_THREADS, (limit,))
    rows = await cursor.fetchall()
    return [ThreadRow(r["thread_id"], r["checkpoint_id"], r["created_at"] or "") for r in rows]
