"""Gather new evidence: RankVote passages, adaptive-k propositions, or dense passages."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from nodes.agent.search import embed_query
from nodes.deps import NodeServices
from store.grasp_retrieval import (
    GatheredEvidence,
    PassageHit,
    RetrievalParams,
    dense_evidence,
    vote_passages,
)
from store.proposition_evidence import adaptive_k_propositions

EvidenceMode = Literal["passages", "propositions", "dense"]


async def gather_evidence(
    services: NodeServices,
    *,
    mode: EvidenceMode,
    corpus_id: int,
    statement: str,
    entities: Sequence[int],
    params: RetrievalParams,
    hits: Sequence[PassageHit] = (),
    prior: Sequence[PassageHit] | None = None,
    visited_propositions: Sequence[int],
) -> GatheredEvidence:
    """Evidence for `statement` (spec §2.2 step 5 and the evidence/retrieval ablations of §4).

    passages: RankVote over the unvisited propositions of `entities`, top `k_passages`;
    propositions: the same ranking, cut by adaptive-k; dense: the top passages by their own
    embeddings, ignoring the graph (nothing is marked visited then).
    """
    if mode != "dense" and not entities and not (mode == "passages" and params.fused):
        return GatheredEvidence([], [])
    query = await embed_query(services.embedder, statement)
    if mode == "dense":
        return await asyncio.to_thread(
            dense_evidence, services.engine, corpus=corpus_id, query=query, k=params.k_passages
        )
    if mode == "propositions":
        return await asyncio.to_thread(
            adaptive_k_propositions,
            services.engine,
            query=query,
            entities=entities,
            params=params,
            visited_propositions=visited_propositions,
        )
    return await asyncio.to_thread(
        vote_passages,
        services.engine,
        corpus=corpus_id,
        query=query,
        entities=entities,
        params=params,
        hits=hits,
        visited_propositions=visited_propositions,
        prior=prior,
    )
