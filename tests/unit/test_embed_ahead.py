"""embed_and_write: chunks written in order with their own vectors, the next embedding queued
before the current one ends, and nothing left running when it fails."""

import threading
import time

import numpy as np
import pytest

from graphs.indexing.embed_ahead import embed_and_write
from nodes.embedding import Vectors


def vectors_of(chunk: list[int]) -> Vectors:
    return np.array([[float(x)] for x in chunk], dtype=np.float32)


async def test_each_chunk_is_written_once_in_order_with_its_own_vectors() -> None:
    chunks = [[1, 2], [3], [4, 5, 6]]
    written: list[tuple[list[int], list[float]]] = []
    await embed_and_write(
        chunks, vectors_of, lambda chunk, v: written.append((chunk, v[:, 0].tolist()))
    )
    assert written == [([1, 2], [1.0, 2.0]), ([3], [3.0]), ([4, 5, 6], [4.0, 5.0, 6.0])]


async def test_no_chunks_embed_and_write_nothing() -> None:
    calls: list[str] = []

    def embed(chunk: list[int]) -> Vectors:
        calls.append("embed")
        return vectors_of(chunk)

    await embed_and_write([], embed, lambda chunk, v: calls.append("write"))
    assert calls == []


async def test_the_next_chunk_is_embedding_before_the_current_one_returns() -> None:
    second_started = threading.Event()
    waited: list[bool] = []

    def embed(chunk: list[int]) -> Vectors:
        if chunk == [1]:
            # Returns only once chunk [2] is being embedded too (or gives up after 10 s).
            waited.append(second_started.wait(timeout=10))
        else:
            second_started.set()
        return vectors_of(chunk)

    await embed_and_write([[1], [2]], embed, lambda chunk, v: None)
    assert waited == [True]


async def test_a_failed_embedding_waits_for_the_write_in_flight_and_writes_nothing_after() -> None:
    written: list[int] = []

    def embed(chunk: list[int]) -> Vectors:
        if chunk == [3]:
            raise RuntimeError("embedder crashed")
        return vectors_of(chunk)

    def write(chunk: list[int], vectors: Vectors) -> None:
        time.sleep(0.2)  # still running when the third chunk's embedding fails
        written.extend(chunk)

    with pytest.raises(RuntimeError, match="embedder crashed"):
        await embed_and_write([[1], [2], [3], [4]], embed, write)
    assert written == [1, 2]
