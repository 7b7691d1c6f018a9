"""Whole-passage rankings for the plain baselines (dense and BM25 RAG) and their passage texts."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine

from store.bm25 import bm25_passages
from store.engine import transaction
from store.retrieval import (
    FloatVector,
    PassageText,
    dense_passages,
    passage_texts,
    search_deeply,
)
from store.scoring import top_k


def ranked_dense_passages(engine: Engine, corpus: int, query: FloatVector, k: int) -> list[int]:
    """The k best passage ids by passage-embedding cosine, best first (the dense baseline)."""
    with transaction(engine) as session:
        search_deeply(session)
        return [pid for pid, _ in top_k(dense_passages(session, corpus, query, k), k)]


def ranked_bm25_passages(engine: Engine, corpus: int, query: str, k: int) -> list[int]:
    """The k best passage ids by BM25 over passage text, best first (the BM25 baseline)."""
    with transaction(engine) as session:
        return [pid for pid, _ in top_k(bm25_passages(session, corpus, query, k), k)]


def passages_by_id(engine: Engine, ids: Sequence[int]) -> list[PassageText]:
    """Titles and texts of passages, in the order of `ids`."""
    with transaction(engine) as session:
        return passage_texts(session, ids)
