"""`grasp bench …`: the benchmark commands, each sub-command registered by its own module.

Loaded by name from `graphs.cli.main` (imports point evals → graphs, never back).
"""

from __future__ import annotations

import argparse
from typing import Any

from evals.bench import concurrency, embedder, faults, index, plans, retrieve


def register(sub: Any) -> None:
    """Add `bench` with its sub-commands."""
    parser: argparse.ArgumentParser = sub.add_parser("bench", help="measure indexing and retrieval")
    benches = parser.add_subparsers(dest="bench", required=True, metavar="BENCH")
    retrieve.register_bench(benches)
    index.register_bench(benches)
    plans.register_bench(benches)
    faults.register_bench(benches)
    concurrency.register_bench(benches)
    embedder.register_bench(benches)
