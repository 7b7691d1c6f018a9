"""The LLM-free peer retrieval methods over the store, as plain functions: ppr, proprag, sa-rag.

Each takes the query's vector (embedded once by the caller) and returns passage ids, best first.
Our units (propositions, or sentences in a `spacy` index) stand in for HippoRAG 2's triples and
SA-RAG's entity descriptions; co-occurrence pairs, with the shared unit as their text, stand in
for SA-RAG's relations (see ARCHITECTURE.md and nodes/retrieval/__init__.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine

from nodes.retrieval.corpus_graph import corpus_graph
from nodes.retrieval.ppr import entity_seeds, ppr_rank
from nodes.retrieval.proprag import PropRagParams, proprag_retrieve
from nodes.retrieval.spreading_activation import SpreadingParams, spreading_activation_retrieve
from store.entity_graph import (
    entity_unit_cosines,
    passage_cosines,
    passage_propositions,
    proposition_details,
    relation_cosines,
    top_propositions,
)

FloatVector = npt.NDArray[np.float32]
Embed = Callable[[list[str]], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class PprParams:
    """HippoRAG 2-style PPR: seeds from the best units' entities plus a small dense passage prior."""

    top_units: int = 5  # HippoRAG 2 links its top-5 facts to graph nodes
    damping: float = 0.5
    passage_prior_weight: float = 0.05


def ppr_passages(
    engine: Engine, corpus: int, query: FloatVector, k: int, params: PprParams | None = None
) -> list[int]:
    """Passages by PPR mass from the top units' entities (weighted by the units' cosines)."""
    params = params or PprParams()
    cached = corpus_graph(engine, corpus)
    top = top_propositions(engine, corpus, query, params.top_units)
    details = proposition_details(engine, [pid for pid, _, _ in top])
    seeds = entity_seeds(
        [(pid, cos) for pid, _, cos in top],
        {pid: detail.entity_ids for pid, detail in details.items()},
    )
    ranked = ppr_rank(
        cached.graph,
        seed_entities=seeds,
        passage_prior=passage_cosines(engine, corpus, query),
        passage_prior_weight=params.passage_prior_weight,
        damping=params.damping,
        top_k=k,
    )
    return [pid for pid, _ in ranked]


def proprag_passages(
    engine: Engine,
    corpus: int,
    query: FloatVector,
    k: int,
    embed: Embed,
    params: PropRagParams | None = None,
) -> list[int]:
    """PropRAG: seeded PPR → top-K subgraph → beam search over unit paths → path-seeded PPR."""
    params = params or PropRagParams()
    cached = corpus_graph(engine, corpus)
    top = top_propositions(engine, corpus, query, params.n_prop)
    details = proposition_details(engine, [pid for pid, _, _ in top])
    result = proprag_retrieve(
        cached.graph,
        query,
        [(pid, cos) for pid, _, cos in top],
        {pid: detail.entity_ids for pid, detail in details.items()},
        lambda passages: proposition_details(engine, passage_propositions(engine, passages)),
        embed,
        passage_cosines(engine, corpus, query),
        params,
    )
    return [pid for pid, _ in result.passages[:k]]


def sa_rag_passages(
    engine: Engine,
    corpus: int,
    query: FloatVector,
    k: int,
    params: SpreadingParams | None = None,
) -> list[int]:
    """SA-RAG: spreading activation from the best-described entities; kept passages by cosine."""
    cached = corpus_graph(engine, corpus)
    neighbours = cached.neighbours

    def relations(region: frozenset[int]) -> dict[tuple[int, int], tuple[float, int]]:
        pairs = [(a, b) for a in region for b in neighbours.get(a, ()) if a < b and b in region]
        return relation_cosines(engine, corpus, query, pairs)

    result = spreading_activation_retrieve(
        entity_unit_cosines(engine, corpus, query),
        neighbours,
        relations,
        passage_cosines(engine, corpus, query),
        cached.entity_passages,
        params,
    )
    return [pid for pid, _ in result.passages[:k]]
