"""The exact top-k units by float4 cosine, from a full scan: what the HNSW walk is measured by."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from store.driver_rows import fetch_rows
from store.retrieval import NEAREST_PROPOSITIONS, FloatVector, vector_literal

EXACT_PROPOSITIONS = text(NEAREST_PROPOSITIONS.format(distance="embedding <=> CAST(:q AS vector)"))
NO_INDEX_SCANS = (
    text("SET LOCAL enable_indexscan = off"),
    text("SET LOCAL enable_bitmapscan = off"),
)


def exact_dense_propositions(
    session: Session, corpus: int, query: FloatVector, k: int
) -> dict[int, float]:
    """Top-k propositions by cosine from a full scan (`grasp bench retrieve`'s ANN R@10).

    The index scans stay off for the rest of the session's transaction, so give it one of its own.
    """
    for setting in NO_INDEX_SCANS:
        session.execute(setting)
    params = {"q": vector_literal(query), "corpus": corpus, "k": k, "exclude": []}
    return {int(r[0]): float(r[1]) for r in fetch_rows(session, EXACT_PROPOSITIONS, params)}
