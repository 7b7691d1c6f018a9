"""How much of the true dense neighbourhood the HNSW search finds, beside the latency it costs.

A latency curve alone can flatter an approximate index: at a fixed `hnsw.ef_search` the graph
walk stays about as long while the corpus grows, and finds less of the true top-k. The scale curve
therefore prints, per size, the overlap of an HNSW top-10 over the units (the engine's settings)
with the exact top-10 from a full scan, over the first timed queries.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine

from store.engine import transaction
from store.exact_search import exact_dense_propositions
from store.retrieval import dense_propositions

#: Queries whose exact top-k is computed: a full scan costs ≈ 0.3 s each at 600k units.
RECALL_QUERIES = 50
RECALL_K = 10


def ann_recall(
    engine: Engine,
    corpus: int,
    vectors: Sequence[npt.NDArray[np.float32]],
    k: int = RECALL_K,
) -> float:
    """Mean share of each query's exact top-k units that the HNSW top-k holds."""
    shares = []
    for vector in vectors:
        with transaction(engine) as session:
            found = set(dense_propositions(session, corpus, vector, k))
        with transaction(engine) as session:  # its own: the full scan's settings last to its end
            exact = list(exact_dense_propositions(session, corpus, vector, k))
        if exact:
            shares.append(len(found.intersection(exact)) / len(exact))
    return statistics.mean(shares) if shares else 1.0
