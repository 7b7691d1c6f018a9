"""The propositions ablation of spec §4: evidence as propositions, cut by adaptive-k."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine

from store.engine import transaction
from store.grasp_retrieval import Evidence, GatheredEvidence, RetrievalParams
from store.retrieval import FloatVector, entity_propositions, passage_texts, proposition_texts
from store.scoring import adaptive_k


def adaptive_k_propositions(
    engine: Engine,
    *,
    query: FloatVector,
    entities: Sequence[int],
    params: RetrievalParams,
    visited_propositions: Sequence[int] = (),
) -> GatheredEvidence:
    """The propositions ablation: the entities' propositions by cosine, cut by adaptive-k."""
    window = params.adaptive_k_window
    with transaction(engine) as session:
        ranked = entity_propositions(session, entities, query, visited_propositions, limit=window)
        keep = ranked[: adaptive_k([cos for _, _, cos in ranked], window)]
        texts = proposition_texts(session, [pid for pid, _, _ in keep])
        titles = {p.id: p.title for p in passage_texts(session, [pas for _, pas, _ in keep])}
    items = [
        Evidence(id=pid, title=titles.get(pas, ""), text=texts[pid][0], score=cos)
        for pid, pas, cos in keep
    ]
    return GatheredEvidence(items, [pid for pid, _, _ in keep])
