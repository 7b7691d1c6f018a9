"""MiniLM's parallel streams give the vectors one stream gives, in order, under concurrent calls;
a small call does not wait behind large ones."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from graphs.models.minilm import SLICE, MiniLmEmbedder

TEXTS = [
    f"Person {i} was born in town {i % 37} in {1800 + i % 211}." for i in range(2 * SLICE + 90)
]


@pytest.fixture(scope="module")
def single() -> MiniLmEmbedder:
    return MiniLmEmbedder(streams=1)


@pytest.fixture(scope="module")
def streamed() -> MiniLmEmbedder:
    return MiniLmEmbedder(streams=2)


def test_a_small_call_uses_one_copy_and_a_large_one_loads_the_streams(
    streamed: MiniLmEmbedder,
) -> None:
    assert streamed.embed(["Where was Person 3 born?"]).shape == (1, 384)
    assert streamed._copies == 1
    streamed.embed(TEXTS)
    assert streamed._copies == 3  # the small calls' copy and one per stream


def test_streamed_vectors_equal_one_streams_row_for_row(
    single: MiniLmEmbedder, streamed: MiniLmEmbedder
) -> None:
    expected = single.embed(TEXTS)
    got = streamed.embed(TEXTS)
    assert got.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # Order: each row is its own text's vector, not a neighbour's.
    assert float(got[SLICE + 5] @ expected[SLICE + 5]) > 0.9999
    assert float(got[SLICE + 5] @ expected[SLICE + 6]) < 0.999


def test_concurrent_calls_share_the_copies_without_mixing_results(
    single: MiniLmEmbedder, streamed: MiniLmEmbedder
) -> None:
    calls = [TEXTS[k:] for k in range(4)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(streamed.embed, calls))
    for texts, got in zip(calls, results, strict=True):
        np.testing.assert_allclose(got, single.embed(texts), atol=1e-5)


def test_a_small_call_does_not_wait_behind_queued_slices(streamed: MiniLmEmbedder) -> None:
    # Two large calls queue sixteen slices on the two streams; a one-text call made once they
    # are under way must be answered from its own copy before they finish, not after.
    finished: list[str] = []
    started = threading.Event()
    original = streamed._encode_slice

    def noting_start(texts: list[str]) -> object:
        started.set()
        return original(texts)

    large = [f"Town {i} lies on river {i % 13} near hill {i % 7}." for i in range(8 * SLICE)]
    streamed._encode_slice = noting_start  # type: ignore[method-assign]
    try:
        with ThreadPoolExecutor(2) as pool:
            short, long = large[: 4 * SLICE], large
            calls = [pool.submit(streamed.embed, short), pool.submit(streamed.embed, long)]
            # Noted by the calls' own threads when they finish, so the list keeps the true order.
            for call in calls:
                call.add_done_callback(lambda _: finished.append("large"))
            assert started.wait(timeout=60)
            assert streamed.embed(["Where is town 3?"]).shape == (1, 384)
            finished.append("small")
            for call in calls:
                call.result()
    finally:
        del streamed._encode_slice
    assert finished == ["small", "large", "large"]
