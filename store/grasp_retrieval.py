"""One GRASP retrieval step over the store: hybrid search → entity scores, then RankVote passages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine

from store.engine import transaction
from store.retrieval import (
    FloatVector,
    PassageText,
    entity_links,
    entity_propositions,
    hybrid_candidates,
    passage_proposition_ids,
    passage_texts,
    proposition_texts,
)
from store.scoring import entity_scores, hybrid_scores, rank_vote, top_k


@dataclass(frozen=True)
class RetrievalParams:
    """The numbers of spec §2.2 (defaults are the paper's or ours where it left them out)."""

    k_props: int = 50
    lexical_weight: float = 0.3
    entity_damping: float = 0.5
    k_entities: int = 10
    k_passages: int = 5
    vote_weight: float = 1.0
    vote_offset: float = 0.0
    uniform_vote: bool = False
    propositions_per_entity: int = 3


@dataclass(frozen=True)
class ScoredEntity:
    """A candidate entity with its score and its best-scoring linked propositions (as context)."""

    id: int
    name: str
    type: str
    score: float
    degree: int
    top_propositions: tuple[str, ...]


@dataclass(frozen=True)
class EntitySearch:
    """Result of hybrid search + entity scoring."""

    propositions: list[tuple[int, float]]
    entities: list[ScoredEntity]


@dataclass(frozen=True)
class VotedPassage:
    """A passage chosen by RankVote."""

    passage: PassageText
    score: float


@dataclass(frozen=True)
class PassageVote:
    """Result of RankVote: the passages and every proposition id of them (to mark visited)."""

    passages: list[VotedPassage]
    proposition_ids: list[int]


def search_entities(
    engine: Engine,
    corpus: int,
    query: FloatVector,
    keywords: str,
    params: RetrievalParams,
    visited_propositions: Sequence[int] = (),
    visited_entities: Sequence[int] = (),
) -> EntitySearch:
    """Hybrid search over propositions (visited excluded) and score their entities."""
    with transaction(engine) as session:
        cos, lexical = hybrid_candidates(
            session, corpus, query, keywords, params.k_props, visited_propositions
        )
        best = top_k(hybrid_scores(cos, lexical, params.lexical_weight), params.k_props)
        scores = dict(best)
        links = entity_links(session, list(scores), visited_entities)
        ranked = top_k(entity_scores(links, scores, params.entity_damping), params.k_entities)
        by_id = {link.entity_id: link for link in links}
        shown = {
            link.entity_id: sorted(link.proposition_ids, key=lambda p: -scores[p])[
                : params.propositions_per_entity
            ]
            for link in (by_id[eid] for eid, _ in ranked)
        }
        texts = proposition_texts(session, [p for ps in shown.values() for p in ps])
    entities = [
        ScoredEntity(
            id=eid,
            name=by_id[eid].name,
            type=by_id[eid].type,
            score=score,
            degree=by_id[eid].degree,
            top_propositions=tuple(texts[p][0] for p in shown[eid]),
        )
        for eid, score in ranked
    ]
    return EntitySearch(best, entities)


def vote_passages(
    engine: Engine,
    query: FloatVector,
    entities: Sequence[int],
    params: RetrievalParams,
    visited_propositions: Sequence[int] = (),
) -> PassageVote:
    """RankVote over the (unvisited) propositions of the chosen entities; top passages win."""
    with transaction(engine) as session:
        ranked = entity_propositions(session, entities, query, visited_propositions)
        votes = rank_vote(
            [(pid, passage) for pid, passage, _ in ranked],
            params.vote_weight,
            params.vote_offset,
            params.uniform_vote,
        )
        winners = top_k(votes, params.k_passages)
        passages = passage_texts(session, [pid for pid, _ in winners])
        covered = passage_proposition_ids(session, [pid for pid, _ in winners])
    score = dict(winners)
    return PassageVote([VotedPassage(p, score[p.id]) for p in passages], covered)
