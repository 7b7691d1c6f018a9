"""New evidence for the evaluator: RankVote passages, adaptive-k propositions, or dense passages."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from nodes.agent.search import embed_query
from nodes.deps import NodeServices
from store.engine import transaction
from store.grasp_retrieval import RetrievalParams, vote_passages
from store.retrieval import (
    FloatVector,
    dense_passages,
    entity_propositions,
    passage_texts,
    proposition_texts,
)
from store.scoring import top_k

EvidenceMode = Literal["passages", "propositions", "dense"]


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence; for a proposition, `title` is its passage's title."""

    id: int
    title: str
    text: str
    score: float


@dataclass(frozen=True)
class EvidenceResult:
    """The evidence, and the proposition ids it covers (to be marked visited)."""

    items: list[Evidence]
    covered_propositions: list[int]


def adaptive_k(scores: Sequence[float], window: int = 20) -> int:
    """How many of the best-first `scores` to keep: cut at the largest drop among the top `window`.

    With fewer than two scores every one is kept; equal drops cut at the first of them.
    """
    head = list(scores[:window])
    if len(head) < 2:
        return len(head)
    gaps = [head[i] - head[i + 1] for i in range(len(head) - 1)]
    return gaps.index(max(gaps)) + 1


def truncate(text: str, limit: int) -> str:
    """Cut long evidence at `limit` characters (an ellipsis marks the cut)."""
    return text if limit <= 0 or len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _voted(
    services: NodeServices,
    query: FloatVector,
    entities: Sequence[int],
    params: RetrievalParams,
    visited: Sequence[int],
) -> EvidenceResult:
    vote = vote_passages(services.engine, query, entities, params, visited)
    items = [
        Evidence(v.passage.id, v.passage.title, v.passage.text, v.score) for v in vote.passages
    ]
    return EvidenceResult(items, vote.proposition_ids)


def _propositions(
    services: NodeServices,
    query: FloatVector,
    entities: Sequence[int],
    visited: Sequence[int],
    window: int,
) -> EvidenceResult:
    with transaction(services.engine) as session:
        ranked = entity_propositions(session, entities, query, visited, limit=window)
        keep = ranked[: adaptive_k([cos for _, _, cos in ranked], window)]
        texts = proposition_texts(session, [pid for pid, _, _ in keep])
        titles = {p.id: p.title for p in passage_texts(session, [pas for _, pas, _ in keep])}
    items = [Evidence(pid, titles.get(pas, ""), texts[pid][0], cos) for pid, pas, cos in keep]
    return EvidenceResult(items, [pid for pid, _, _ in keep])


def _dense(services: NodeServices, corpus_id: int, query: FloatVector, k: int) -> EvidenceResult:
    with transaction(services.engine) as session:
        best = top_k(dense_passages(session, corpus_id, query, k), k)
        passages = passage_texts(session, [pid for pid, _ in best])
    score = dict(best)
    return EvidenceResult([Evidence(p.id, p.title, p.text, score[p.id]) for p in passages], [])


async def gather_evidence(
    services: NodeServices,
    mode: EvidenceMode,
    corpus_id: int,
    statement: str,
    entities: Sequence[int],
    params: RetrievalParams,
    visited_propositions: Sequence[int],
    adaptive_window: int = 20,
) -> EvidenceResult:
    """Evidence for `statement` (spec §2.2 step 5 and the evidence/retrieval ablations of §4).

    passages: RankVote over the unvisited propositions of `entities`, top `k_passages`;
    propositions: the same ranking, cut by adaptive_k; dense: the top passages by their own
    embeddings, ignoring the graph (nothing is marked visited then).
    """
    if mode != "dense" and not entities:
        return EvidenceResult([], [])
    query = await embed_query(services.embedder, statement)
    if mode == "dense":
        return await asyncio.to_thread(_dense, services, corpus_id, query, params.k_passages)
    if mode == "propositions":
        return await asyncio.to_thread(
            _propositions, services, query, entities, visited_propositions, adaptive_window
        )
    return await asyncio.to_thread(_voted, services, query, entities, params, visited_propositions)
