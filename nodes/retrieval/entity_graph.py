"""The corpus graph (entities and passages) as one weighted sparse matrix, for per-query PPR."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from nodes.retrieval.walk import Transition, transition_matrix

IdArray = npt.NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class EntityGraph:
    """A corpus's entity–passage graph over a fixed node order: all entities, then all passages.

    Node ``i < n_entities`` is ``entity_ids[i]``; node ``n_entities + j`` is ``passage_ids[j]``.
    Entity and passage ids live in different tables, so they are never mixed in one index map.
    Compared by identity (``eq=False``): a cache holds one instance per corpus version.
    """

    entity_ids: IdArray
    passage_ids: IdArray
    entity_index: Mapping[int, int]
    passage_index: Mapping[int, int]
    adjacency: sp.csr_array
    synonyms: Mapping[int, frozenset[int]]

    @property
    def n_entities(self) -> int:
        """How many entity nodes come first in the node order."""
        return int(self.entity_ids.shape[0])

    @property
    def n_nodes(self) -> int:
        """Entities plus passages."""
        return self.n_entities + int(self.passage_ids.shape[0])

    @cached_property
    def transition(self) -> Transition:
        """The random-walk matrix of the whole graph, built once and reused by every query."""
        return transition_matrix(self.adjacency)

    def passage_node(self, passage_id: int) -> int:
        """The node index of a passage id (KeyError when the passage is not in the graph)."""
        return self.n_entities + self.passage_index[passage_id]

    def entities_of_passages(self, passage_nodes: IdArray) -> IdArray:
        """Entity node indices adjacent to the given passage nodes (their containment edges)."""
        if passage_nodes.size == 0:
            return np.zeros(0, dtype=np.int64)
        rows = self.adjacency[passage_nodes]
        neighbours = np.unique(rows.indices).astype(np.int64)
        return neighbours[neighbours < self.n_entities]


def _positions(ids: IdArray, wanted: Sequence[int], kind: str) -> IdArray:
    """Positions of ``wanted`` ids inside ``ids`` (vectorised; unknown ids are a caller bug)."""
    query = np.asarray(wanted, dtype=np.int64)
    if query.size == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    slot = np.searchsorted(ids, query, sorter=order)
    slot = np.minimum(slot, max(ids.shape[0] - 1, 0))
    found = ids.shape[0] > 0 and np.array_equal(ids[order[slot]], query)
    if not found:
        missing = sorted(set(query.tolist()) - set(ids.tolist()))
        raise ValueError(f"unknown {kind} ids in graph edges: {missing[:10]}")
    return order[slot].astype(np.int64)


def _columns(rows: Iterable[tuple[int, int, float]]) -> tuple[list[int], list[int], list[float]]:
    """Split (a, b, weight) rows into three lists."""
    a: list[int] = []
    b: list[int] = []
    w: list[float] = []
    for left, right, weight in rows:
        a.append(int(left))
        b.append(int(right))
        w.append(float(weight))
    return a, b, w


def build_entity_graph(
    entity_ids: Sequence[int],
    passage_ids: Sequence[int],
    cooccurrence: Iterable[tuple[int, int, float]],
    synonyms: Iterable[tuple[int, int, float]],
    containment: Iterable[tuple[int, int, float]],
    *,
    cooccurrence_weight: float = 1.0,
    synonym_weight: float = 1.0,
    containment_units: bool = False,
) -> EntityGraph:
    """Build the symmetric weighted graph PPR walks on, from the store's three edge lists.

    - ``cooccurrence``: (entity_a, entity_b, shared_units) → weight ``cooccurrence_weight × shared_units``
      (PropRAG's entity cliques: more shared propositions, stronger tie).
    - ``synonyms``: (entity_a, entity_b, cosine) → weight ``synonym_weight × cosine`` (HippoRAG 2 weighs
      synonymy edges by their similarity).
    - ``containment``: (entity_id, passage_id, n_units) → weight 1 by default, or ``n_units`` with
      ``containment_units=True``. One is the default because a count would let long passages and
      repeated mentions dominate the walk; PropRAG and HippoRAG 2 use plain containment edges.

    Parallel edges of different kinds between the same two nodes are summed; self-loops are
    dropped (an entity co-occurring with itself carries no signal). The graph is assembled with
    networkx and exported with the fixed node order as a CSR matrix.
    """
    entities = np.asarray(entity_ids, dtype=np.int64)
    passages = np.asarray(passage_ids, dtype=np.int64)
    if np.unique(entities).size != entities.size or np.unique(passages).size != passages.size:
        raise ValueError("entity_ids and passage_ids must not repeat")
    n_entities = int(entities.size)
    n_nodes = n_entities + int(passages.size)

    co_a, co_b, co_w = _columns(cooccurrence)
    syn_a, syn_b, syn_w = _columns(synonyms)
    con_e, con_p, con_w = _columns(containment)

    u = np.concatenate(
        [
            _positions(entities, co_a, "entity"),
            _positions(entities, syn_a, "entity"),
            _positions(entities, con_e, "entity"),
        ]
    )
    v = np.concatenate(
        [
            _positions(entities, co_b, "entity"),
            _positions(entities, syn_b, "entity"),
            _positions(passages, con_p, "passage") + n_entities,
        ]
    )
    containment_w = (
        np.asarray(con_w, dtype=np.float64) if containment_units else np.ones(len(con_w))
    )
    w = np.concatenate(
        [
            cooccurrence_weight * np.asarray(co_w, dtype=np.float64),
            synonym_weight * np.asarray(syn_w, dtype=np.float64),
            containment_w,
        ]
    )

    # Sum parallel edges before networkx sees them: Graph.add_weighted_edges_from keeps only the
    # last weight of a repeated pair, which would silently drop a co-occurrence or synonymy tie.
    keep = u != v
    lo, hi, w = np.minimum(u, v)[keep], np.maximum(u, v)[keep], w[keep]
    keys, inverse = np.unique(lo * n_nodes + hi, return_inverse=True)
    summed = np.bincount(inverse.ravel(), weights=w, minlength=keys.size)

    graph = nx.Graph()
    graph.add_nodes_from(range(n_nodes))
    graph.add_weighted_edges_from(
        zip((keys // n_nodes).tolist(), (keys % n_nodes).tolist(), summed.tolist(), strict=True)
    )
    adjacency = sp.csr_array(
        nx.to_scipy_sparse_array(graph, nodelist=range(n_nodes), weight="weight", format="csr"),
        dtype=np.float64,
    )

    synonym_map: dict[int, set[int]] = {}
    for a, b in zip(syn_a, syn_b, strict=True):
        if a != b:
            synonym_map.setdefault(a, set()).add(b)
            synonym_map.setdefault(b, set()).add(a)

    return EntityGraph(
        entity_ids=entities,
        passage_ids=passages,
        entity_index={int(e): i for i, e in enumerate(entities.tolist())},
        passage_index={int(p): j for j, p in enumerate(passages.tolist())},
        adjacency=adjacency,
        synonyms={k: frozenset(vs) for k, vs in synonym_map.items()},
    )
