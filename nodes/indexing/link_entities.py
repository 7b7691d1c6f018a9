"""The indexer's graph-layer step: embed new entity names and link each entity to its synonyms."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from nodes.deps import NodeServices
from store.entity_graph_links import (
    LINK_CHUNK,
    SYNONYM_NEIGHBOURS,
    SYNONYM_THRESHOLD,
    link_synonym_chunk,
    unlinked_entities,
)


@dataclass
class LinkReport:
    """What the step did this run, for the index summary's counters."""

    names_embedded: int = 0
    entities_linked: int = 0
    synonym_edges_added: int = 0


async def link_entities(
    services: NodeServices,
    corpus_id: int,
    *,
    threshold: float = SYNONYM_THRESHOLD,
    neighbours: int = SYNONYM_NEIGHBOURS,
    chunk: int = LINK_CHUNK,
) -> LinkReport:
    """Bring the corpus's synonymy edges up to date, chunk by committed chunk (resumable).

    Each chunk's names are embedded outside any transaction; storing them, the neighbour search
    and the `synonyms_linked` marks then commit together, so a finished chunk is never redone and
    a re-run with every entity linked changes nothing.
    """
    report = LinkReport()
    engine, embedder = services.engine, services.embedder
    after = 0
    while todo := await asyncio.to_thread(unlinked_entities, engine, corpus_id, chunk, after):
        missing = [entity for entity in todo if entity.needs_embedding]
        vectors = {}
        if missing:
            embedded = await asyncio.to_thread(embedder.embed, [e.name for e in missing])
            vectors = {e.id: vector for e, vector in zip(missing, embedded, strict=True)}
        done = await asyncio.to_thread(
            link_synonym_chunk, engine, corpus_id, todo, vectors, threshold, neighbours
        )
        report.names_embedded += len(missing)
        report.entities_linked += done.entities
        report.synonym_edges_added += done.edges
        after = todo[-1].id
    return report
