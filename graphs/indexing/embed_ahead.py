"""Embedding chunks while earlier ones are written: the embedder never waits on the database."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

from nodes.embedding import Vectors

T = TypeVar("T")


async def embed_and_write(
    chunks: Sequence[T],
    embed: Callable[[T], Vectors],
    write: Callable[[T, Vectors], None],
    written: Callable[[T], None] | None = None,
) -> None:
    """Embed and write chunks in order, the embedder never waiting on a write or a chunk boundary.

    The next chunk's embedding is queued before the current one is done (a streamed embedder
    then always has a slice to start), and each chunk is written while later ones are embedded.
    On an error, what is still running is awaited before the error goes on, so no write lands
    after the step has failed. `written` is told of each chunk once it is stored (on the loop).
    """
    embedding = asyncio.create_task(asyncio.to_thread(embed, chunks[0])) if chunks else None
    writing: asyncio.Task[None] | None = None
    try:
        for n, chunk in enumerate(chunks):
            current, embedding = embedding, None
            if n + 1 < len(chunks):
                embedding = asyncio.create_task(asyncio.to_thread(embed, chunks[n + 1]))
            assert current is not None
            vectors = await current
            if writing is not None:
                await writing
                if written is not None:
                    written(chunks[n - 1])
            writing = asyncio.create_task(asyncio.to_thread(write, chunk, vectors))
        if writing is not None:
            await writing
            if written is not None:
                written(chunks[-1])
    finally:
        running = [t for t in (embedding, writing) if t is not None and not t.done()]
        await asyncio.gather(*running, return_exceptions=True)
