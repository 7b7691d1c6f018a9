"""A corpus's entity graph built from the store once and reused until the corpus changes.

The cache key is (database URL, corpus id) and every hit is checked against the corpus's
`graph_version`, which the store bumps in the same transaction as any change to the graph layer:
a stale or foreign graph is never served.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import Engine

from nodes.retrieval.entity_graph import EntityGraph, build_entity_graph
from nodes.retrieval.spreading_activation import neighbour_map
from store.entity_graph import graph_version, load_graph_edges


@dataclass(frozen=True, eq=False)
class CorpusGraph:
    """One corpus's graph, the co-occurrence neighbours and containment, at one graph version."""

    corpus_id: int
    version: int
    graph: EntityGraph
    neighbours: Mapping[int, frozenset[int]]
    entity_passages: Mapping[int, tuple[int, ...]]


_cache: dict[tuple[str, int], CorpusGraph] = {}
_lock = threading.Lock()


def load_corpus_graph(engine: Engine, corpus_id: int) -> CorpusGraph:
    """Read the corpus's graph layer from the store and build its matrices (no cache)."""
    edges = load_graph_edges(engine, corpus_id)
    contained: dict[int, list[int]] = {}
    for entity, passage, _units in edges.containment:
        contained.setdefault(entity, []).append(passage)
    graph = build_entity_graph(
        edges.entity_ids,
        edges.passage_ids,
        edges.cooccurrence,
        synonyms=edges.synonyms,
        containment=edges.containment,
    )
    return CorpusGraph(
        corpus_id=corpus_id,
        version=edges.version,
        graph=graph,
        neighbours=neighbour_map(edges.cooccurrence),
        entity_passages={entity: tuple(sorted(ps)) for entity, ps in contained.items()},
    )


def corpus_graph(engine: Engine, corpus_id: int) -> CorpusGraph:
    """The cached graph of this corpus in this database, rebuilt when its version moved on."""
    key = (engine.url.render_as_string(hide_password=False), corpus_id)
    current = graph_version(engine, corpus_id)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached.version == current:
            return cached
    fresh = load_corpus_graph(engine, corpus_id)
    with _lock:
        _cache[key] = fresh
    return fresh


def clear_graph_cache() -> None:
    """Forget every cached graph (tests, or a process that dropped corpora)."""
    with _lock:
        _cache.clear()
