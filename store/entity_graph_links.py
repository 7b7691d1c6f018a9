"""Writes of the entity graph layer after extraction: entity name embeddings and synonymy edges.

Entities are linked in chunks, each committed with a graph_version bump and marked
`synonyms_linked`, so an interrupted index resumes where it stopped and a re-run with nothing left
to do changes nothing. Cosine is symmetric, so a new entity finds its older synonyms itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pgvector import Vector
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from store.corpus_lock import lock_corpus
from store.engine import transaction
from store.graph_writes import FloatVector
from store.retrieval import set_ef_search

#: Name-embedding cosine from which two entities are synonyms (HippoRAG 2's synonymy edges).
SYNONYM_THRESHOLD = 0.80
#: Nearest neighbours asked of the HNSW index per entity. Cosine is symmetric, so a pair is found
#: from either side; adding passages later gives the edges a full rebuild gives as long as no
#: entity has more than this many synonyms above the threshold.
SYNONYM_NEIGHBOURS = 20
#: HNSW search depth of the synonym search (the engine's 100 is for filtered retrieval top-k):
#: on 10k clustered names it found every pair ≥ 0.8 that 100 found, 2.4 times faster.
SYNONYM_EF_SEARCH = 40
#: Entities per chunk: one embedder call and one transaction.
LINK_CHUNK = 512

# The neighbour search must go through the HNSW index. The planner cannot know that: the vectors
# it searches are stored by this very transaction, so the statistics (if autovacuum has analysed
# the new entities at all) call them NULL, and it would sort every same-corpus entity for each
# one instead: 2.4 s rather than 0.06 s a chunk on 2,439 entities, and quadratic in the corpus.
NO_SORTED_SCANS = text("SET LOCAL enable_sort = off")
BUMP_GRAPH_VERSION = text("UPDATE corpora SET graph_version = graph_version + 1 WHERE id = :corpus")

UNLINKED_ENTITIES = text("""
SELECT id, name, name_embedding IS NULL AS needs_embedding FROM entities
WHERE corpus_id = :corpus AND NOT synonyms_linked AND id > :after
ORDER BY id
LIMIT :limit
""")


@dataclass(frozen=True)
class UnlinkedEntity:
    """An entity the synonym search has not run for yet, and whether its name needs a vector."""

    id: int
    name: str
    needs_embedding: bool


def unlinked_entities(
    engine: Engine, corpus: int, limit: int = LINK_CHUNK, after: int = 0
) -> list[UnlinkedEntity]:
    """The next entities (id above `after`, in id order) not yet searched for synonyms."""
    with transaction(engine) as session:
        rows = session.execute(
            UNLINKED_ENTITIES, {"corpus": corpus, "after": after, "limit": limit}
        ).all()
    return [UnlinkedEntity(int(r[0]), str(r[1]), bool(r[2])) for r in rows]


# One row version per entity: the name vector (unless it has one) and the marker in one UPDATE,
# because every new version of an entity row is one more insertion into the HNSW index.
MARK_LINKED = text("""
UPDATE entities e
SET name_embedding = coalesce(e.name_embedding, CAST(v.vector AS vector)), synonyms_linked = true
FROM unnest(CAST(:ids AS bigint[]), CAST(:vectors AS text[])) AS v(id, vector)
WHERE e.id = v.id AND e.corpus_id = :corpus AND NOT e.synonyms_linked
  AND (e.name_embedding IS NOT NULL OR v.vector IS NOT NULL)
RETURNING e.id
""")

# The chunk's nearest names in the same corpus through the HNSW index (a LATERAL top-k per entity,
# not all pairs), including the names this transaction just stored; pairs at or above the
# threshold are stored once as (smaller id, larger id). A zero name vector has a NaN cosine, which
# PostgreSQL sorts above every number, hence the NaN test.
LINK_SYNONYMS = text("""
WITH todo AS MATERIALIZED (
    SELECT id, name_embedding FROM entities
    WHERE id = ANY(:ids) AND corpus_id = :corpus AND name_embedding IS NOT NULL
),
pairs AS (
    SELECT DISTINCT ON (least(t.id, n.id), greatest(t.id, n.id))
           least(t.id, n.id) AS a, greatest(t.id, n.id) AS b, n.similarity
    FROM todo t
    CROSS JOIN LATERAL (
        SELECT e.id, 1 - (e.name_embedding <=> t.name_embedding) AS similarity
        FROM entities e
        WHERE e.corpus_id = :corpus AND e.id <> t.id AND e.name_embedding IS NOT NULL
        ORDER BY e.name_embedding <=> t.name_embedding
        LIMIT :neighbours
    ) n
    WHERE n.similarity >= :threshold AND n.similarity <> 'NaN'::float8
    ORDER BY least(t.id, n.id), greatest(t.id, n.id)
)
INSERT INTO entity_synonyms (corpus_id, entity_a, entity_b, similarity)
SELECT :corpus, a, b, similarity FROM pairs
ON CONFLICT DO NOTHING
RETURNING 1
""")


def use_hnsw_for_synonyms(session: Session, neighbours: int = SYNONYM_NEIGHBOURS) -> None:
    """Send the transaction's synonym searches through the HNSW index, at the linker's depth."""
    set_ef_search(session, max(SYNONYM_EF_SEARCH, neighbours))
    session.execute(NO_SORTED_SCANS)


def _vector_text(vector: FloatVector | None) -> str | None:
    # pgvector's text form at full float32 precision; NULL keeps a stored vector.
    return None if vector is None else Vector(np.asarray(vector, dtype=np.float32)).to_text()


@dataclass(frozen=True)
class SynonymChunk:
    """What one synonym-linking chunk did: entities marked linked and new synonymy edges."""

    entities: int
    edges: int


def link_synonym_chunk(
    engine: Engine,
    corpus: int,
    chunk: Sequence[UnlinkedEntity],
    vectors: dict[int, FloatVector],
    threshold: float = SYNONYM_THRESHOLD,
    neighbours: int = SYNONYM_NEIGHBOURS,
) -> SynonymChunk:
    """Store the chunk's name vectors, search each entity's synonyms, mark it linked: one commit.

    `vectors` holds the names of the entities that need one. The transaction holds the corpus's
    entity lock, so it never interleaves with a batch write or another linker; entities another
    linker finished meanwhile are skipped, and graph_version is bumped when anything changed.
    """
    if not chunk:
        return SynonymChunk(0, 0)
    given = {
        "corpus": corpus,
        "ids": [e.id for e in chunk],
        "vectors": [_vector_text(vectors.get(e.id)) for e in chunk],
    }
    with transaction(engine) as session:
        lock_corpus(session, corpus)
        ids = sorted(int(i) for i in session.execute(MARK_LINKED, given).scalars())
        if not ids:
            return SynonymChunk(0, 0)
        use_hnsw_for_synonyms(session, neighbours)
        params = {"corpus": corpus, "ids": ids, "neighbours": neighbours, "threshold": threshold}
        edges = len(session.execute(LINK_SYNONYMS, params).all())
        session.execute(BUMP_GRAPH_VERSION, {"corpus": corpus})
    return SynonymChunk(len(ids), edges)
