"""Hybrid search over propositions and entity scoring, off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from nodes.deps import NodeServices
from nodes.embedding import Embedder
from store.grasp_retrieval import EntitySearch, RetrievalParams, search_entities
from store.retrieval import FloatVector
from store.single_pass import single_pass_passages


async def embed_query(embedder: Embedder, statement: str) -> FloatVector:
    """The statement's vector (embedders may be slow or remote, so in a thread)."""
    vectors = await asyncio.to_thread(embedder.embed, [statement])
    query: FloatVector = vectors[0]
    return query


def keyword_text(keywords: Sequence[str], statement: str) -> str:
    """The BM25 query text; the statement itself when the model gave no keywords."""
    joined = " ".join(k.strip() for k in keywords if k.strip())
    return joined or statement


async def search(
    services: NodeServices,
    *,
    corpus_id: int,
    statement: str,
    keywords: Sequence[str],
    params: RetrievalParams,
    visited_propositions: Sequence[int],
    visited_entities: Sequence[int],
) -> EntitySearch:
    """Score unvisited propositions by s(p); return the top unvisited entities (spec §2.2 2–3)."""
    query = await embed_query(services.embedder, statement)
    return await asyncio.to_thread(
        search_entities,
        services.engine,
        corpus=corpus_id,
        query=query,
        keywords=keyword_text(keywords, statement),
        params=params,
        visited_propositions=visited_propositions,
        visited_entities=visited_entities,
    )


async def best_passage(
    services: NodeServices, *, corpus_id: int, question: str, params: RetrievalParams
) -> int | None:
    """The best passage for the whole question in one LLM-free pass (None in an empty corpus)."""
    query = await embed_query(services.embedder, question)
    found = await asyncio.to_thread(
        single_pass_passages,
        services.engine,
        corpus=corpus_id,
        query=query,
        keywords=question,
        params=params,
        k=1,
    )
    return found[0] if found else None
