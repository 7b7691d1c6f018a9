"""One GRASP retrieval step over the store: hybrid search → entity scores, then the new evidence.

The records it returns (ScoredEntity, Evidence) are the very ones the agent keeps in its state, so
they are TypedDicts of plain values (checkpoints serialise them as they are). TypedDict comes from
typing_extensions: pydantic (which builds the schemas Studio shows) refuses typing.TypedDict before
Python 3.12.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from sqlalchemy import Engine
from sqlalchemy.orm import Session
from typing_extensions import TypedDict

from store.bridge import bridge_shares, page_passages
from store.engine import transaction
from store.retrieval import (
    FloatVector,
    dense_passages,
    entity_links,
    entity_propositions,
    hybrid_candidates,
    passage_texts,
    passages_with_propositions,
    proposition_texts,
    search_deeply,
)
from store.scoring import (
    ADAPTIVE_K_WINDOW,
    entity_scores,
    fuse_passage_scores,
    hit_passages,
    hybrid_scores,
    rank_vote,
    top_k,
    traversed_entities,
)


@dataclass(frozen=True)
class RetrievalParams:
    """The numbers of spec §2.2, and the one home of their defaults (the paper's, or ours)."""

    k_props: int = 50
    lexical_weight: float = 0.3
    entity_damping: float = 0.5
    k_entities: int = 10
    # Entities traversed when no LLM selects (LLM-free retrieval, entity_selection=off): with no
    # prompt to pay for, a wider traversal is free, and it is what lifts single-pass recall.
    k_entities_unselected: int = 15
    k_passages: int = 5
    vote_weight: float = 1.0
    vote_offset: float = 0.0
    uniform_vote: bool = False
    propositions_per_entity: int = 3
    adaptive_k_window: int = ADAPTIVE_K_WINDOW
    # Not the paper's RankVote (all 0): fusing the search hits, a dense prior and the bridge
    # (store/bridge.py) into the vote is what lets the graph lead dense retrieval and the peers.
    # With the entities of the best 5 hits traversed when nothing selects, these were chosen on
    # musique_train alone and held on hotpotqa_train and 2Wiki (docs/retrieval.md, issue 34).
    hit_weight: float = 1.0
    prior_weight: float = 1.0
    prior_passages: int = 100
    hit_entities: int = 5
    bridge_weight: float = 3.0
    # The pages of the entities the best hit's passage names (store/bridge.py), chosen on
    # musique_train alone like the rest (docs/experiments.md).
    page_weight: float = 0.3

    @property
    def fused(self) -> bool:
        """Whether passage scores add hits, a prior, the bridge or pages to the vote (paper: no)."""
        return bool(self.hit_weight or self.prior_weight or self.bridge_weight or self.page_weight)

    def plain_vote(self) -> RetrievalParams:
        """The same numbers with every fused term off: the paper's RankVote."""
        return replace(self, hit_weight=0.0, prior_weight=0.0, bridge_weight=0.0, page_weight=0.0)


class ScoredEntity(TypedDict):
    """A candidate entity for entity selection, with the texts of its best linked propositions."""

    id: int
    name: str
    type: str
    score: float
    degree: int
    propositions: list[str]


class PassageHit(TypedDict):
    """A passage holding one of the search hits, with the best s(p) among them."""

    passage_id: int
    score: float


class Evidence(TypedDict):
    """A passage the evaluator reads (or a proposition, titled with its passage's title)."""

    id: int
    title: str
    text: str
    score: float


@dataclass(frozen=True)
class EntitySearch:
    """Result of hybrid search + entity scoring: the kept (proposition, s(p)) and the entities.

    `prior` is the dense prior of the same query (top `prior_passages` passages by cosine), fetched
    beside the search so that the vote does not have to wait for it.
    """

    propositions: list[tuple[int, float]]
    entities: list[ScoredEntity]
    hits: list[PassageHit]
    prior: list[PassageHit] = field(default_factory=list)


@dataclass(frozen=True)
class GatheredEvidence:
    """New evidence, and the proposition ids it covers (the agent marks them visited)."""

    items: list[Evidence]
    covered_propositions: list[int]


# The dense prior depends on the query vector alone, so it runs on a second connection while the
# hybrid search runs on the first: on 60k propositions that hides ≈2 ms of the step. (The
# propositions-evidence ablation fetches it without using it.)
_BESIDE = ThreadPoolExecutor(max_workers=4, thread_name_prefix="grasp-prior")


def dense_prior(engine: Engine, corpus: int, query: FloatVector, k: int) -> list[PassageHit]:
    """The top-k passages by their own embeddings' cosine, best first (the vote's dense prior)."""
    with transaction(engine) as session:
        ranked = dense_passages(session, corpus, query, k)
    return [PassageHit(passage_id=p, score=c) for p, c in ranked.items()]


def search_entities(
    engine: Engine,
    *,
    corpus: int,
    query: FloatVector,
    keywords: str,
    params: RetrievalParams,
    visited_propositions: Sequence[int] = (),
    visited_entities: Sequence[int] = (),
) -> EntitySearch:
    """Hybrid search over propositions (visited excluded) and score their entities.

    With a prior weight, the dense prior for the vote is fetched at the same time (`prior`).
    """
    prior: Future[list[PassageHit]] | None = None
    if params.prior_weight:
        prior = _BESIDE.submit(dense_prior, engine, corpus, query, params.prior_passages)
    with transaction(engine) as session:
        candidates = hybrid_candidates(
            session, corpus, query, keywords, params.k_props, visited_propositions
        )
        best = top_k(
            hybrid_scores(candidates.cosine, candidates.lexical, params.lexical_weight),
            params.k_props,
        )
        scores = dict(best)
        links = entity_links(session, list(scores), visited_entities)
        ranked = traversed_entities(
            entity_scores(links, scores, params.entity_damping),
            links,
            best,
            k=params.k_entities,
            hit_units=params.hit_entities,
        )
        by_id = {link.entity_id: link for link in links}
        shown = {
            link.entity_id: sorted(link.proposition_ids, key=lambda p: -scores[p])[
                : params.propositions_per_entity
            ]
            for link in (by_id[eid] for eid, _ in ranked)
        }
    texts = candidates.texts
    passage_of = {pid: texts[pid][1] for pid in scores}
    hits = [
        PassageHit(passage_id=passage, score=score)
        for passage, score in top_k(hit_passages(best, passage_of), len(best))
    ]
    entities = [
        ScoredEntity(
            id=eid,
            name=by_id[eid].name,
            type=by_id[eid].type,
            score=score,
            degree=by_id[eid].degree,
            propositions=[texts[p][0] for p in shown[eid]],
        )
        for eid, score in ranked
    ]
    return EntitySearch(best, entities, hits, prior.result() if prior is not None else [])


def vote_passages(
    engine: Engine,
    *,
    corpus: int,
    query: FloatVector,
    entities: Sequence[int],
    params: RetrievalParams,
    hits: Sequence[PassageHit] = (),
    visited_propositions: Sequence[int] = (),
    prior: Sequence[PassageHit] | None = None,
) -> GatheredEvidence:
    """RankVote over the (unvisited) propositions of the chosen entities; top passages win.

    With `params.fused`, the vote is fused with the search hits' passages and a dense prior over
    the top `prior_passages` passages (passages already shown are left out of the prior). `prior`
    is that list when the search already fetched it for the same query; None fetches it here.
    """
    with transaction(engine) as session:
        ranked = entity_propositions(session, entities, query, visited_propositions)
        votes = rank_vote(
            [(pid, passage) for pid, passage, _ in ranked],
            weight=params.vote_weight,
            offset=params.vote_offset,
            uniform=params.uniform_vote,
        )
        if params.fused:
            terms = fused_terms(
                session, corpus, query, entities, params, hits, prior, visited_propositions
            )
            votes = fuse_passage_scores(votes, terms)
        winners = top_k(votes, params.k_passages)
        passages, covered = passages_with_propositions(session, [pid for pid, _ in winners])
    score = dict(winners)
    items = [Evidence(id=p.id, title=p.title, text=p.text, score=score[p.id]) for p in passages]
    return GatheredEvidence(items, covered)


def fused_terms(
    session: Session,
    corpus: int,
    query: FloatVector,
    entities: Sequence[int],
    params: RetrievalParams,
    hits: Sequence[PassageHit],
    prior: Sequence[PassageHit] | None,
    visited_propositions: Sequence[int],
) -> list[tuple[float, dict[int, float]]]:
    """The (weight, passage scores) terms fused into the vote.

    Passages already shown get no prior, bridge or page score (their propositions are visited,
    so they get no vote either). A page scores the best hit's s(p), as the bridge's scale.
    """
    shown: set[int] = set()
    if params.prior_weight or params.bridge_weight or params.page_weight:
        shown = {
            passage for _, passage in proposition_texts(session, visited_propositions).values()
        }
    prior_scores: dict[int, float] = {}
    if params.prior_weight:
        ranked_prior = (
            dense_passages(session, corpus, query, params.prior_passages)
            if prior is None
            else {hit["passage_id"]: hit["score"] for hit in prior}
        )
        prior_scores = {p: cos for p, cos in ranked_prior.items() if p not in shown}
    bridge: dict[int, float] = {}
    pages: dict[int, float] = {}
    if hits:
        best = max(hits, key=lambda hit: hit["score"])
        if params.bridge_weight:
            shares = bridge_shares(session, entities, best["passage_id"], sorted(shown))
            bridge = {p: best["score"] * share for p, share in shares.items()}
        if params.page_weight:
            titled = page_passages(session, corpus, best["passage_id"], sorted(shown))
            pages = dict.fromkeys(titled, best["score"])
    return [
        (params.hit_weight, {hit["passage_id"]: hit["score"] for hit in hits}),
        (params.prior_weight, prior_scores),
        (params.bridge_weight, bridge),
        (params.page_weight, pages),
    ]


def dense_evidence(engine: Engine, *, corpus: int, query: FloatVector, k: int) -> GatheredEvidence:
    """The dense ablation: the top-k passages by their own embeddings; nothing is marked visited."""
    with transaction(engine) as session:
        search_deeply(session)
        best = top_k(dense_passages(session, corpus, query, k), k)
        passages = passage_texts(session, [pid for pid, _ in best])
    score = dict(best)
    items = [Evidence(id=p.id, title=p.title, text=p.text, score=score[p.id]) for p in passages]
    return GatheredEvidence(items, [])
