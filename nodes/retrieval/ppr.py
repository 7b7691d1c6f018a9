"""Personalized PageRank by sparse power iteration, and the HippoRAG 2-style `ppr` passage ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nodes.retrieval.entity_graph import EntityGraph
from nodes.retrieval.walk import Transition, transition_matrix

FloatArray = npt.NDArray[np.float64]


def personalized_pagerank(
    adjacency: sp.csr_array | sp.csr_matrix | Transition,
    reset: npt.ArrayLike,
    *,
    damping: float,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> FloatArray:
    """PPR mass of every node: the stationary walk that restarts at ``reset`` with prob. 1 − damping.

    ``damping`` is the probability of following an edge (networkx's ``alpha``). A dangling node
    (no out-edges) sends its mass back to the reset distribution, which is networkx's default, so
    results match ``networkx.pagerank(G, alpha=damping, personalization=reset)``. ``reset`` is
    normalised to sum 1. Iteration stops when the L1 change falls below ``tol``; after
    ``max_iter`` steps the last iterate is returned (with damping < 1 the error shrinks by at
    least ``damping`` per step, so this only happens with damping close to 1).
    """
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping}")
    walk = adjacency if isinstance(adjacency, Transition) else transition_matrix(adjacency)
    restart = np.asarray(reset, dtype=np.float64).ravel()
    if restart.shape[0] != walk.matrix.shape[0]:
        raise ValueError(f"reset has {restart.shape[0]} entries for {walk.matrix.shape[0]} nodes")
    if np.any(restart < 0):
        raise ValueError("reset must be non-negative")
    total = float(restart.sum())
    if total <= 0.0:
        raise ValueError("reset must have positive mass")
    restart = restart / total

    teleport = (1.0 - damping) * restart
    has_dangling = bool(walk.dangling.any())
    scores = restart.copy()
    for _ in range(max_iter):
        following = damping * (walk.matrix @ scores)
        if has_dangling:
            following += (damping * float(scores[walk.dangling].sum())) * restart
        following += teleport
        change = float(np.abs(following - scores).sum())
        scores = following
        if change < tol:
            break
    result: FloatArray = scores
    return result


def min_max(scores: FloatArray) -> FloatArray:
    """Rescale to [0, 1]; all-equal scores become all 1 (every candidate equally good)."""
    if scores.size == 0:
        return scores
    low, high = float(scores.min()), float(scores.max())
    if high == low:
        return np.ones_like(scores)
    result: FloatArray = (scores - low) / (high - low)
    return result


def passage_prior_vector(graph: EntityGraph, prior: Mapping[int, float]) -> FloatArray:
    """Dense passage scores as a node vector: min-max to [0, 1], then summing to 1 (or all 0).

    Ids outside the graph are ignored; min-max runs over the passages given (the caller's
    candidates), so the weakest given passage gets no prior mass.
    """
    vector = np.zeros(graph.n_nodes, dtype=np.float64)
    known = [(graph.passage_node(p), s) for p, s in prior.items() if p in graph.passage_index]
    if not known:
        return vector
    nodes = np.fromiter((n for n, _ in known), dtype=np.int64, count=len(known))
    values = min_max(np.fromiter((s for _, s in known), dtype=np.float64, count=len(known)))
    total = float(values.sum())
    if total > 0.0:
        vector[nodes] = values / total
    return vector


def entity_seed_vector(graph: EntityGraph, seeds: Mapping[int, float]) -> FloatArray:
    """Seed weights as a node vector summing to 1 (or all 0); unknown or non-positive ids drop."""
    vector = np.zeros(graph.n_nodes, dtype=np.float64)
    for entity, weight in seeds.items():
        node = graph.entity_index.get(entity)
        if node is not None and weight > 0:
            vector[node] += weight
    total = float(vector.sum())
    if total > 0.0:
        vector /= total
    return vector


def rank_nodes(
    scores: FloatArray, ids: npt.NDArray[np.int64], top_k: int | None = None
) -> list[tuple[int, float]]:
    """(id, score) pairs best first, ties by the smaller id; only the best ``top_k`` if given."""
    candidates = np.arange(scores.shape[0])
    if top_k is not None and top_k < scores.shape[0]:
        # Keep everything tied with the k-th score so the id tie-break stays exact.
        kth = np.partition(scores, scores.shape[0] - top_k)[scores.shape[0] - top_k]
        candidates = np.flatnonzero(scores >= kth)
    order = candidates[np.lexsort((ids[candidates], -scores[candidates]))][:top_k]
    return [(int(ids[i]), float(scores[i])) for i in order.tolist()]


def ppr_rank(
    graph: EntityGraph,
    *,
    seed_entities: Mapping[int, float],
    passage_prior: Mapping[int, float],
    passage_prior_weight: float = 0.05,
    damping: float = 0.5,
    top_k: int | None = None,
    tol: float = 1e-10,
) -> list[tuple[int, float]]:
    """HippoRAG 2-style retrieval: passages ranked by PPR mass from entity seeds plus a dense prior.

    Reset = seed weights (normalised to sum 1) + ``passage_prior_weight`` × passage prior
    (min-max to [0, 1], then normalised to sum 1). Returns (passage id, mass) best first, ties by
    the smaller id; empty when there is nothing to seed the walk with.
    """
    reset = entity_seed_vector(graph, seed_entities) + passage_prior_weight * passage_prior_vector(
        graph, passage_prior
    )
    if graph.n_nodes == 0 or float(reset.sum()) <= 0.0:
        return []
    scores = personalized_pagerank(graph.transition, reset, damping=damping, tol=tol)
    return rank_nodes(scores[graph.n_entities :], graph.passage_ids, top_k)


def entity_seeds(
    top_props: Sequence[tuple[int, float]],
    prop_entities: Mapping[int, Sequence[int]],
) -> dict[int, float]:
    """Seed weight per entity: the summed scores of the top propositions it occurs in.

    An entity listed twice in one proposition counts once for it.
    """
    seeds: dict[int, float] = {}
    for prop_id, score in top_props:
        for entity in dict.fromkeys(prop_entities.get(prop_id, ())):
            seeds[entity] = seeds.get(entity, 0.0) + float(score)
    return seeds
