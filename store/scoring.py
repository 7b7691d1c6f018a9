"""GRASP retrieval's scoring formulas as plain functions: hybrid, entity, RankVote, adaptive-k."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


def hybrid_scores(
    cosine: Mapping[int, float], bm25: Mapping[int, float], lexical_weight: float
) -> dict[int, float]:
    """`s(p) = cos(q, p) + λ · bm25(p) / max bm25` over the union of both candidate sets.

    Max-normalisation maps BM25 into [0, 1] so it adds to a cosine; a proposition with no BM25
    match gets 0 for that term. Every id in `bm25` must also have a cosine.
    """
    top = max(bm25.values(), default=0.0)
    scores: dict[int, float] = {}
    for pid, cos in cosine.items():
        lexical = bm25.get(pid, 0.0) / top if top > 0 else 0.0
        scores[pid] = cos + lexical_weight * lexical
    return scores


def top_k(scores: Mapping[int, float], k: int) -> list[tuple[int, float]]:
    """The k best (id, score) pairs, ties broken by the smaller id so results are repeatable."""
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


@dataclass(frozen=True)
class EntityLink:
    """An entity with its degree and the scored propositions it is linked to."""

    entity_id: int
    name: str
    type: str
    degree: int
    proposition_ids: tuple[int, ...]


def entity_scores(
    links: Iterable[EntityLink], proposition_scores: Mapping[int, float], damping: float
) -> dict[int, float]:
    """`score(e) = Σ_{p ∈ top-k ∩ P(e)} s(p) / deg(e)^α`: hubs are damped by their degree."""
    scores: dict[int, float] = {}
    for link in links:
        total = sum(proposition_scores.get(pid, 0.0) for pid in link.proposition_ids)
        scores[link.entity_id] = total / math.pow(max(link.degree, 1), damping)
    return scores


def traversed_entities(
    scores: Mapping[int, float],
    links: Iterable[EntityLink],
    hits: Sequence[tuple[int, float]],
    *,
    k: int,
    hit_units: int,
) -> list[tuple[int, float]]:
    """The k best entities by score(e), then every other entity of the `hit_units` best hits.

    Degree damping ranks a hub named in the best hit below the one-off names (dates, figures)
    beside it; a bridge is often such a hub, so the best hits' entities are kept whatever
    their score (PPR seeds all of them). The added ones follow, best score first.
    """
    ranked = top_k(scores, k)
    kept = {entity for entity, _ in ranked}
    best = {unit for unit, _ in hits[:hit_units]}
    extra = {
        link.entity_id: scores[link.entity_id]
        for link in links
        if link.entity_id not in kept and best.intersection(link.proposition_ids)
    }
    return ranked + top_k(extra, len(extra))


def rank_vote(
    ranked: Sequence[tuple[int, int]],
    *,
    weight: float = 1.0,
    offset: float = 0.0,
    uniform: bool = False,
) -> dict[int, float]:
    """Passage scores from propositions ranked best-first, given as (proposition, passage) pairs.

    RankVote: `score(d) = Σ w / (r(p) + c)` with ranks r = 1, 2, …; `uniform` gives every
    proposition the same vote w (the uniform-vote ablation).
    """
    scores: dict[int, float] = defaultdict(float)
    for rank, (_, passage) in enumerate(ranked, start=1):
        scores[passage] += weight if uniform else weight / (rank + offset)
    return dict(scores)


def hit_passages(
    hits: Sequence[tuple[int, float]], passage_of: Mapping[int, int]
) -> dict[int, float]:
    """Each passage's best hybrid score s(p) among the search hits (propositions) it contains."""
    best: dict[int, float] = {}
    for proposition, score in hits:
        passage = passage_of[proposition]
        best[passage] = max(best.get(passage, score), score)
    return best


def fuse_passage_scores(
    votes: Mapping[int, float], terms: Sequence[tuple[float, Mapping[int, float]]]
) -> dict[int, float]:
    """RankVote scaled to [0, 1] by its best passage, plus each weighted term's passage scores.

    The paper's RankVote only sees propositions reached through the chosen entities, so a passage
    whose sentence matched the search itself but whose entities were not picked never scores;
    the terms put such passages back: the search hits (a passage's best s(p)), the dense prior
    (its own cosine to the statement), the bridge from the best hit (store/bridge.py). Scaling
    the vote keeps the terms comparable. A term of weight 0 is skipped.
    """
    top = max(votes.values(), default=0.0) or 1.0
    fused = {passage: vote / top for passage, vote in votes.items()}
    for weight, extra in terms:
        if weight:
            for passage, score in extra.items():
                fused[passage] = fused.get(passage, 0.0) + weight * score
    return fused


#: The adaptive-k cut is sought among this many best propositions (the one home of this default).
ADAPTIVE_K_WINDOW = 20


def adaptive_k(scores: Sequence[float], window: int = ADAPTIVE_K_WINDOW) -> int:
    """How many of the best-first `scores` to keep: cut at the largest drop among the top `window`.

    With fewer than two scores every one is kept; equal drops cut at the first of them.
    """
    head = list(scores[:window])
    if len(head) < 2:
        return len(head)
    gaps = [head[i] - head[i + 1] for i in range(len(head) - 1)]
    return gaps.index(max(gaps)) + 1
