"""Personalized PageRank against networkx and hand-computed values; the entity graph; `ppr` ranking."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from nodes.retrieval.entity_graph import EntityGraph, build_entity_graph
from nodes.retrieval.ppr import (
    entity_seeds,
    personalized_pagerank,
    ppr_rank,
    rank_nodes,
)


def _nx_reference(graph: nx.Graph, reset: dict[int, float], damping: float) -> np.ndarray:
    ranks = nx.pagerank(graph, alpha=damping, personalization=reset, weight="weight", tol=1e-12)
    return np.array([ranks[n] for n in range(graph.number_of_nodes())])


def _adjacency(graph: nx.Graph) -> sp.csr_array:
    nodes = range(graph.number_of_nodes())
    return sp.csr_array(nx.to_scipy_sparse_array(graph, nodelist=nodes, weight="weight"))


def _weighted_with_dangling() -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(range(6))  # node 5 has no edge: dangling
    graph.add_weighted_edges_from(
        [(0, 1, 3.0), (1, 2, 1.0), (2, 0, 0.5), (2, 3, 2.0), (3, 4, 0.25)]
    )
    return graph


@pytest.mark.parametrize(
    ("graph", "reset", "damping"),
    [
        (_weighted_with_dangling(), {0: 1.0}, 0.5),
        (_weighted_with_dangling(), {0: 0.2, 4: 0.3, 5: 0.5}, 0.75),  # reset on the dangling node
        (nx.karate_club_graph(), {0: 1.0, 33: 2.0}, 0.85),  # its edges carry weights
        (nx.path_graph(4), {3: 1.0}, 0.45),
    ],
)
def test_matches_networkx_pagerank(
    graph: nx.Graph, reset: dict[int, float], damping: float
) -> None:
    vector = np.zeros(graph.number_of_nodes())
    for node, weight in reset.items():
        vector[node] = weight
    ours = personalized_pagerank(_adjacency(graph), vector, damping=damping)
    np.testing.assert_allclose(ours, _nx_reference(graph, reset, damping), atol=1e-6, rtol=0)
    assert ours.sum() == pytest.approx(1.0, abs=1e-9)


def test_directed_weights_follow_networkx_row_convention() -> None:
    graph = nx.DiGraph()
    graph.add_weighted_edges_from([(0, 1, 2.0), (1, 2, 1.0), (1, 0, 3.0), (2, 3, 1.0)])
    reset = {0: 1.0, 2: 1.0}
    ranks = nx.pagerank(graph, alpha=0.6, personalization=reset, tol=1e-12)
    adjacency = sp.csr_array(nx.to_scipy_sparse_array(graph, nodelist=range(4)))
    ours = personalized_pagerank(adjacency, [1.0, 0.0, 1.0, 0.0], damping=0.6)
    np.testing.assert_allclose(ours, [ranks[n] for n in range(4)], atol=1e-6)


def test_path_of_three_by_hand() -> None:
    # 0 — 1 — 2, restart at 0, damping ½:
    #   p0 = ½ + ½·p1/2,  p1 = ½·(p0 + p2),  p2 = ½·p1/2   ⇒  p = (7/12, 4/12, 1/12)
    adjacency = sp.csr_array(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=np.float64))
    ours = personalized_pagerank(adjacency, [1.0, 0.0, 0.0], damping=0.5)
    np.testing.assert_allclose(ours, [7 / 12, 4 / 12, 1 / 12], atol=1e-9)


def test_reset_is_normalised_and_validated() -> None:
    adjacency = sp.csr_array(np.array([[0, 1], [1, 0]], dtype=np.float64))
    # Two nodes, restart at 0: p0 = 1/(1+d), p1 = d/(1+d); a scaled reset changes nothing.
    np.testing.assert_allclose(
        personalized_pagerank(adjacency, [5.0, 0.0], damping=0.5), [2 / 3, 1 / 3], atol=1e-9
    )
    with pytest.raises(ValueError):
        personalized_pagerank(adjacency, [0.0, 0.0], damping=0.5)
    with pytest.raises(ValueError):
        personalized_pagerank(adjacency, [1.0, -1.0], damping=0.5)
    with pytest.raises(ValueError):
        personalized_pagerank(adjacency, [1.0, 0.0], damping=1.0)


def _toy_graph() -> EntityGraph:
    # Entities 11, 12, 13, 14; passages 101 (11, 12), 102 (12, 13), 103 (14).
    return build_entity_graph(
        [11, 12, 13, 14],
        [101, 102, 103],
        cooccurrence=[(11, 12, 2), (12, 13, 1), (12, 11, 1)],  # 11–12 listed twice: summed
        synonyms=[(13, 14, 0.9)],
        containment=[(11, 101, 3), (12, 101, 1), (12, 102, 2), (13, 102, 1), (14, 103, 1)],
    )


def test_entity_graph_sums_parallel_edges_and_orders_nodes() -> None:
    graph = _toy_graph()
    dense = graph.adjacency.toarray()
    assert graph.n_entities == 4 and graph.n_nodes == 7
    assert dense[0, 1] == dense[1, 0] == 3.0  # co-occurrence 2 + 1
    assert dense[2, 3] == pytest.approx(0.9)  # synonymy
    assert dense[0, graph.passage_node(101)] == 1.0  # containment defaults to 1
    np.testing.assert_array_equal(dense, dense.T)
    assert graph.synonyms == {13: frozenset({14}), 14: frozenset({13})}

    counted = build_entity_graph(
        [11, 12],
        [101],
        cooccurrence=[(11, 12, 1)],
        synonyms=[(11, 12, 0.85)],  # a synonymy edge on top of a co-occurrence edge: summed
        containment=[(11, 101, 3)],
        containment_units=True,
    ).adjacency.toarray()
    assert counted[0, 1] == pytest.approx(1.85) and counted[0, 2] == 3.0

    with pytest.raises(ValueError, match="unknown entity"):
        build_entity_graph([1], [2], cooccurrence=[(1, 9, 1)], synonyms=[], containment=[])


def test_rank_nodes_breaks_ties_by_id_even_when_cut() -> None:
    scores = np.array([0.1, 0.5, 0.3, 0.5, 0.5])
    ids = np.array([50, 40, 30, 20, 10], dtype=np.int64)
    assert rank_nodes(scores, ids) == [(10, 0.5), (20, 0.5), (40, 0.5), (30, 0.3), (50, 0.1)]
    assert rank_nodes(scores, ids, 2) == [(10, 0.5), (20, 0.5)]
    assert rank_nodes(scores, ids, 9) == rank_nodes(scores, ids)


def test_entities_of_passages() -> None:
    graph = _toy_graph()
    nodes = np.array([graph.passage_node(101), graph.passage_node(102)], dtype=np.int64)
    assert graph.entity_ids[graph.entities_of_passages(nodes)].tolist() == [11, 12, 13]


def test_entity_seeds_sum_scores_of_their_propositions() -> None:
    seeds = entity_seeds([(1, 0.9), (2, 0.5), (3, 0.2)], {1: (11, 12), 2: (12, 12), 3: ()})
    assert seeds == pytest.approx({11: 0.9, 12: 1.4})


def test_ppr_rank_matches_networkx_with_seeds_and_prior() -> None:
    graph = _toy_graph()
    seeds = {11: 2.0, 13: 1.0, 999: 5.0}  # 999 is not in the graph: ignored
    prior = {101: 0.3, 102: 0.5, 103: 0.7}  # min-max → 0, ½, 1 → normalised 0, ⅓, ⅔
    ranked = ppr_rank(graph, seed_entities=seeds, passage_prior=prior, damping=0.5)

    reset = {0: 2 / 3, 2: 1 / 3, 5: 0.05 / 3, 6: 0.1 / 3}
    reference_graph = nx.from_scipy_sparse_array(graph.adjacency)
    expected = _nx_reference(reference_graph, reset, 0.5)
    by_id = dict(ranked)
    for j, pid in enumerate([101, 102, 103]):
        assert by_id[pid] == pytest.approx(expected[4 + j], abs=1e-6)
    assert [pid for pid, _ in ranked] == sorted(by_id, key=lambda p: (-by_id[p], p))
    assert ppr_rank(graph, seed_entities={}, passage_prior={}) == []
    assert len(ppr_rank(graph, seed_entities=seeds, passage_prior=prior, top_k=2)) == 2
