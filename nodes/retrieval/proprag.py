"""PropRAG's LLM-free two-stage retrieval (paper 002 §5.2, A.2, A.6) on our entity–passage graph."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nodes.retrieval.beam import (
    BeamSettings,
    Embed,
    PropositionLike,
    ScoredPath,
    beam_search,
    path_entity_scores,
)
from nodes.retrieval.entity_graph import EntityGraph
from nodes.retrieval.ppr import entity_seeds, min_max, personalized_pagerank, rank_nodes

FetchPropositions = Callable[[Sequence[int]], Mapping[int, PropositionLike]]
PassagePrior = Mapping[int, float] | Callable[[Sequence[int]], Mapping[int, float]]


@dataclass(frozen=True)
class PropositionDetail:
    """One proposition as the beam search reads it (any record with these attributes will do)."""

    id: int
    passage_id: int
    text: str
    embedding: npt.NDArray[np.float32]
    entity_ids: tuple[int, ...]


@dataclass(frozen=True)
class PropRagParams:
    """Every PropRAG number, defaulting to the paper's values (002 Appendix A.2)."""

    n_prop: int = 20  # N_prop: top propositions whose entities seed stage 1
    n_entity: int = 40  # N_entity: at most this many uniform-weight stage-1 seeds
    explore_damping: float = 0.75  # stage-1 PPR: high, to reach far from the seeds
    exploit_damping: float = 0.45  # stage-2 PPR: low, to stay near the path-derived seeds
    subgraph_passages: int = 50  # K: stage-1 passages that induce the subgraph
    beam_width: int = 4  # B
    max_path_length: int = 3  # L_max
    rerank_top: int = 40  # M: candidates re-scored by embedding the concatenated path text
    jump_points: int = 3  # best initial propositions offered to every path as a jump
    initial_seeds: int = 5  # B_initial: exploration seeds for the stage-2 PPR
    initial_seed_propositions: int | None = None  # P_initial; None means beam_width, as in A.2
    beam_seeds: int = 5  # B_beam: exploitation seeds taken from the paths
    beam_seed_paths: int = 5  # P_beam: best paths whose entities are scored
    synonym_boost: float = 1.0  # A.6: the increment is "equivalent to the path's score"
    passage_prior_weight: float = 0.05  # λ_passage: dense prior mass next to the seeds' mass 1
    exploration_share: float = 0.5  # share of the seeds' mass given to exploration seeds
    tol: float = 1e-10  # PPR convergence (L1)

    def __post_init__(self) -> None:
        counts = (
            self.n_prop,
            self.n_entity,
            self.subgraph_passages,
            self.beam_width,
            self.max_path_length,
            self.rerank_top,
        )
        if min(counts) < 1:
            raise ValueError("PropRAG counts must be at least 1")
        if min(self.jump_points, self.initial_seeds, self.beam_seeds, self.beam_seed_paths) < 0:
            raise ValueError("PropRAG seed and jump counts must be non-negative")
        if not (0 <= self.explore_damping < 1 and 0 <= self.exploit_damping < 1):
            raise ValueError("PPR damping must be in [0, 1)")
        if not 0.0 <= self.exploration_share <= 1.0:
            raise ValueError("exploration_share must be in [0, 1]")

    @property
    def p_initial(self) -> int:
        """How many initial (beam-start) propositions the exploration seeds come from."""
        return (
            self.beam_width
            if self.initial_seed_propositions is None
            else self.initial_seed_propositions
        )


@dataclass(frozen=True)
class PropRagResult:
    """The final passage ranking plus what produced it, for traces and tests."""

    passages: tuple[tuple[int, float], ...]  # (passage id, stage-2 PPR mass), best first
    paths: tuple[ScoredPath, ...]  # the P_beam best paths whose entities seeded stage 2
    subgraph: tuple[int, ...]  # stage-1 top-K passage ids, best first
    seeds: Mapping[int, float] = field(default_factory=dict)  # stage-2 entity reset weights


def _top(scores: Mapping[int, float], k: int) -> dict[int, float]:
    """The k best (id, score) entries, ties by the smaller id."""
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
    return dict(best)


def _within(scores: Mapping[int, float], allowed: set[int]) -> dict[int, float]:
    """The entries whose id is in ``allowed`` (seeds outside the subgraph cannot seed its PPR)."""
    return {k: v for k, v in scores.items() if k in allowed}


def _normalised(weights: Mapping[int, float]) -> dict[int, float]:
    """Weights scaled to sum 1 (empty or zero-sum stays empty)."""
    total = sum(w for w in weights.values() if w > 0)
    return {k: w / total for k, w in weights.items() if w > 0} if total > 0 else {}


def _prior_vector(passages: Sequence[int], prior: Mapping[int, float]) -> npt.NDArray[np.float64]:
    """Dense prior over ``passages``: min-max over those with a score, then summing to 1 (or 0).

    A passage without a score gets none, like in ``ppr_rank``.
    """
    vector = np.zeros(len(passages), dtype=np.float64)
    scored = [i for i, pid in enumerate(passages) if pid in prior]
    if scored:
        vector[scored] = min_max(np.array([float(prior[passages[i]]) for i in scored]))
    total = float(vector.sum())
    return vector / total if total > 0 else vector


def _stage_one_seeds(
    graph: EntityGraph,
    top_props: Sequence[tuple[int, float]],
    prop_entities: Mapping[int, Sequence[int]],
    params: PropRagParams,
) -> npt.NDArray[np.float64]:
    """Uniform reset over the first N_entity distinct graph entities of the top N_prop propositions."""
    chosen: dict[int, None] = {}
    for prop_id, _score in top_props[: params.n_prop]:
        for entity in prop_entities.get(prop_id, ()):
            node = graph.entity_index.get(entity)
            if node is not None and len(chosen) < params.n_entity:
                chosen.setdefault(node)
    reset = np.zeros(graph.n_nodes, dtype=np.float64)
    reset[list(chosen)] = 1.0
    return reset


def proprag_retrieve(
    graph: EntityGraph,
    query: npt.ArrayLike,
    top_props: Sequence[tuple[int, float]],
    prop_entities: Mapping[int, Sequence[int]],
    fetch_propositions: FetchPropositions,
    embed: Embed,
    passage_prior: PassagePrior,
    params: PropRagParams | None = None,
) -> PropRagResult:
    """Rank passages the PropRAG way: seed PPR → top-K subgraph → path beam search → seeded PPR.

    ``top_props`` are the query's best propositions (id, score) best first and ``prop_entities``
    their entities; ``fetch_propositions`` returns every proposition of the given passages;
    ``embed`` embeds path texts with the query's embedder; ``passage_prior`` holds dense passage
    scores, or computes them for the subgraph's passage ids. Falls back to the stage-1 order when
    stage 2 has nothing to seed with; returns an empty result when stage 1 has no seed at all.
    """
    p = params or PropRagParams()
    empty = PropRagResult(passages=(), paths=(), subgraph=())
    if graph.n_nodes == 0:
        return empty

    # Stage 1: exploratory PPR on the whole graph from the top propositions' entities.
    reset = _stage_one_seeds(graph, top_props, prop_entities, p)
    if not reset.any():
        return empty
    mass = personalized_pagerank(graph.transition, reset, damping=p.explore_damping, tol=p.tol)
    best = rank_nodes(mass[graph.n_entities :], graph.passage_ids, p.subgraph_passages)
    stage_one = [(pid, m) for pid, m in best if m > 0]
    subgraph = tuple(pid for pid, _ in stage_one)
    passage_nodes = np.fromiter(
        (graph.passage_node(pid) for pid in subgraph), dtype=np.int64, count=len(subgraph)
    )
    entity_nodes = graph.entities_of_passages(passage_nodes)
    nodes = np.concatenate([entity_nodes, passage_nodes])
    sub_entities = {int(graph.entity_ids[n]) for n in entity_nodes.tolist()}

    # Stage 2a: beam search over every proposition of the subgraph's passages.
    fetched = fetch_propositions(list(subgraph))
    props = [fetched[k] for k in sorted(fetched)]
    settings = BeamSettings(p.beam_width, p.max_path_length, p.rerank_top, p.jump_points)
    beam = beam_search(query, props, graph.synonyms, embed, settings)
    best_paths = tuple(beam.final[: p.beam_seed_paths])

    # Stage 2b: exploitation seeds from the best paths (A.6); exploration seeds from the top
    # P_initial propositions the beam started from (A.2 sets P_initial to the beam width).
    path_scores = path_entity_scores(best_paths, fetched, graph.synonyms, p.synonym_boost)
    exploit = _normalised(_top(_within(path_scores, sub_entities), p.beam_seeds))
    starts = [(path.propositions[0], path.score) for path in beam.initial[: p.p_initial]]
    explore_raw = entity_seeds(starts, {pr.id: pr.entity_ids for pr in props})
    explore = _normalised(_top(_within(explore_raw, sub_entities), p.initial_seeds))

    share = p.exploration_share if explore and exploit else (1.0 if explore else 0.0)
    seeds: dict[int, float] = {}
    for entity, weight in explore.items():
        seeds[entity] = seeds.get(entity, 0.0) + share * weight
    for entity, weight in exploit.items():
        seeds[entity] = seeds.get(entity, 0.0) + (1.0 - share) * weight

    # Stage 2c: exploitative PPR on the subgraph, seeds plus the dense passage prior.
    local = {int(n): i for i, n in enumerate(nodes.tolist())}
    sub_reset = np.zeros(nodes.size, dtype=np.float64)
    for entity, weight in seeds.items():
        sub_reset[local[graph.entity_index[entity]]] += weight
    prior = passage_prior(list(subgraph)) if callable(passage_prior) else passage_prior
    sub_reset[entity_nodes.size :] += p.passage_prior_weight * _prior_vector(subgraph, prior)
    if not sub_reset.any():
        return PropRagResult(passages=tuple(stage_one), paths=best_paths, subgraph=subgraph)

    adjacency = sp.csr_array(graph.adjacency[nodes][:, nodes])
    final = personalized_pagerank(adjacency, sub_reset, damping=p.exploit_damping, tol=p.tol)
    ranking = rank_nodes(final[entity_nodes.size :], np.asarray(subgraph, dtype=np.int64))
    return PropRagResult(passages=tuple(ranking), paths=best_paths, subgraph=subgraph, seeds=seeds)
