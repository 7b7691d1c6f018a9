"""The cache flusher's size: twice the last-level cache sysfs reports, within bounds."""

from __future__ import annotations

from pathlib import Path

from evals.bench.caches import (
    MAX_FLUSH_BYTES,
    MIN_FLUSH_BYTES,
    CacheFlusher,
    flush_bytes,
    last_level_cache_bytes,
)


def cache_dir(tmp_path: Path, sizes: list[str]) -> Path:
    for at, size in enumerate(sizes):
        (tmp_path / f"index{at}").mkdir()
        (tmp_path / f"index{at}" / "size").write_text(size + "\n")
    return tmp_path


def test_the_largest_cache_is_read_in_its_units(tmp_path: Path) -> None:
    found = last_level_cache_bytes(cache_dir(tmp_path, ["48K", "64K", "2048K", "491520K"]))
    assert found == 491520 * 1024


def test_sizes_in_megabytes_and_unreadable_entries(tmp_path: Path) -> None:
    assert last_level_cache_bytes(cache_dir(tmp_path, ["32M", "odd", "512"])) == 32 * 2**20
    assert last_level_cache_bytes(tmp_path / "missing") is None


def test_the_buffer_is_twice_the_cache_within_bounds() -> None:
    assert flush_bytes(300 * 2**20) == 600 * 2**20
    assert flush_bytes(None) == MIN_FLUSH_BYTES  # a VM that reports no cache
    assert flush_bytes(8 * 2**20) == MIN_FLUSH_BYTES
    assert flush_bytes(4 * 2**30) == MAX_FLUSH_BYTES


def test_a_flush_reads_the_whole_buffer() -> None:
    flusher = CacheFlusher(size=8 * 2**20)
    assert flusher.flush() == 2**20  # one million float64 ones, summed
