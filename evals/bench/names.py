"""Which corpora a benchmark may build, delete and rebuild: only its own."""

from __future__ import annotations

import argparse

#: Benchmarks delete and rebuild their corpus, so they only ever touch corpora named like this.
BENCH_PREFIX = "bench-"


def bench_corpus(name: str) -> str:
    """argparse type: a benchmark corpus name; a user's corpus can never be replaced by one."""
    if not name.startswith(BENCH_PREFIX) or len(name) == len(BENCH_PREFIX):
        raise argparse.ArgumentTypeError(
            f"benchmarks rebuild their corpus, so its name must start with {BENCH_PREFIX!r} "
            f"(got {name!r}); your own corpora are never touched"
        )
    return name
