"""Consume a blocking iterator from async code: it runs whole in one worker thread.

One thread from first item to last matters where the iterator holds a lock across its items
(llama.cpp's), and a consumer that stops early must still let it finish and release it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TypeVar, cast

Item = TypeVar("Item")


async def iterate_in_thread(
    start: Callable[[threading.Event], Iterator[Item]],
) -> AsyncIterator[Item]:
    """Yield the items of `start(stop)` as a worker thread produces them.

    When the consumer stops early (a cancelled run, a closed stream), `stop` is set; the
    iterator should end at its next item, and this waits for the thread to be done.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[Item | None, BaseException | None, bool]] = asyncio.Queue()
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in start(stop):
                loop.call_soon_threadsafe(queue.put_nowait, (item, None, False))
        except BaseException as exc:  # handed to the consumer, which raises it
            loop.call_soon_threadsafe(queue.put_nowait, (None, exc, True))
        else:
            loop.call_soon_threadsafe(queue.put_nowait, (None, None, True))

    worker = asyncio.ensure_future(asyncio.to_thread(produce))
    try:
        while True:
            item, error, done = await queue.get()
            if error is not None:
                raise error
            if done:
                return
            yield cast(Item, item)
    finally:
        stop.set()
        await asyncio.shield(worker)
