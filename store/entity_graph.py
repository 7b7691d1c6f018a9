"""Reads of the entity graph layer for the graph retrieval methods (PPR, PropRAG, SA-RAG).

Every statement is a named constant beside the function that runs it, and every corpus-wide one
filters by corpus; reads by id take ids that only one corpus's reads could have produced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pgvector.sqlalchemy import Vector
from sqlalchemy import Engine, TextClause, bindparam, text

from store.engine import transaction
from store.graph_writes import FloatVector
from store.models import EMBEDDING_DIM, UNIT_ANN_DISTANCE
from store.retrieval import search_deeply
from store.vector_bytes import vector_from_bytes


def _with_query(sql: str) -> TextClause:
    # The query vector as a typed parameter: pgvector's own text form, at full float32 precision.
    return text(sql).bindparams(bindparam("q", type_=Vector(EMBEDDING_DIM)))


def _ids(values: Iterable[int]) -> list[int]:
    return [int(v) for v in values]


GRAPH_VERSION = text("SELECT graph_version FROM corpora WHERE id = :corpus")


def graph_version(engine: Engine, corpus_id: int) -> int:
    """The corpus's graph-layer version: a cache keyed by it is stale once it changes."""
    with transaction(engine) as session:
        return int(session.execute(GRAPH_VERSION, {"corpus": corpus_id}).scalar_one())


@dataclass(frozen=True)
class GraphEdges:
    """A corpus's whole entity graph layer at one version, as id lists and edge tuples."""

    corpus_id: int
    version: int
    entity_ids: list[int]
    passage_ids: list[int]
    cooccurrence: list[tuple[int, int, int]]
    synonyms: list[tuple[int, int, float]]
    containment: list[tuple[int, int, int]]


GRAPH_ENTITIES = text("SELECT id FROM entities WHERE corpus_id = :corpus ORDER BY id")
GRAPH_PASSAGES = text(
    "SELECT id FROM passages WHERE corpus_id = :corpus AND status = 'done' ORDER BY id"
)
GRAPH_COOCCURRENCE = text("""
SELECT entity_a, entity_b, count(*) AS units
FROM entity_cooccurrences
WHERE corpus_id = :corpus
GROUP BY entity_a, entity_b
ORDER BY entity_a, entity_b
""")
GRAPH_SYNONYMS = text("""
SELECT entity_a, entity_b, similarity FROM entity_synonyms
WHERE corpus_id = :corpus ORDER BY entity_a, entity_b
""")
GRAPH_CONTAINMENT = text("""
SELECT entity_id, passage_id, n_units FROM entity_passages
WHERE corpus_id = :corpus ORDER BY entity_id, passage_id
""")


def load_graph_edges(engine: Engine, corpus_id: int) -> GraphEdges:
    """The corpus's nodes and edges with their version, read in one snapshot so they match."""
    params = {"corpus": corpus_id}
    snapshot = engine.execution_options(isolation_level="REPEATABLE READ")
    with snapshot.connect() as conn, conn.begin():
        version = int(conn.execute(GRAPH_VERSION, params).scalar_one())
        entities = _ids(conn.execute(GRAPH_ENTITIES, params).scalars())
        passages = _ids(conn.execute(GRAPH_PASSAGES, params).scalars())
        cooccurrence = [
            (int(a), int(b), int(n)) for a, b, n in conn.execute(GRAPH_COOCCURRENCE, params)
        ]
        synonyms = [(int(a), int(b), float(s)) for a, b, s in conn.execute(GRAPH_SYNONYMS, params)]
        containment = [
            (int(e), int(p), int(n)) for e, p, n in conn.execute(GRAPH_CONTAINMENT, params)
        ]
    return GraphEdges(corpus_id, version, entities, passages, cooccurrence, synonyms, containment)


# The HNSW scan may return rows slightly out of order (iterative scan, relaxed order): re-sort.
TOP_PROPOSITIONS = _with_query(
    """
WITH hits AS MATERIALIZED (
    SELECT id, passage_id, 1 - (embedding <=> :q) AS cos
    FROM propositions
    WHERE corpus_id = :corpus
    ORDER BY """
    + UNIT_ANN_DISTANCE
    + """
    LIMIT :k
)
SELECT id, passage_id, cos FROM hits ORDER BY cos DESC, id
"""
)


def top_propositions(
    engine: Engine, corpus_id: int, query: FloatVector, k: int
) -> list[tuple[int, int, float]]:
    """The k units nearest the query over the HNSW index: (unit, passage, cosine), best first."""
    with transaction(engine) as session:
        search_deeply(session)
        rows = session.execute(TOP_PROPOSITIONS, {"q": query, "corpus": corpus_id, "k": k})
        return [(int(r[0]), int(r[1]), float(r[2])) for r in rows]


@dataclass(frozen=True)
class PropositionDetail:
    """A unit with its vector and linked entities, for path search over propositions."""

    id: int
    passage_id: int
    text: str
    embedding: FloatVector
    entity_ids: tuple[int, ...]


PROPOSITION_DETAILS = text("""
SELECT p.id, p.passage_id, p.text, vector_send(p.embedding) AS embedding,
       coalesce(array_agg(ep.entity_id ORDER BY ep.entity_id)
                FILTER (WHERE ep.entity_id IS NOT NULL), '{}') AS entities
FROM propositions p
LEFT JOIN entity_propositions ep ON ep.proposition_id = p.id
WHERE p.id = ANY(:ids)
GROUP BY p.id
""")


def proposition_details(engine: Engine, ids: Sequence[int]) -> dict[int, PropositionDetail]:
    """id → the unit's passage, text, float32 embedding and sorted entity ids (unknown ids skipped)."""
    if not ids:
        return {}
    with transaction(engine) as session:
        rows = session.execute(PROPOSITION_DETAILS, {"ids": _ids(ids)}).all()
    return {
        int(r.id): PropositionDetail(
            int(r.id),
            int(r.passage_id),
            r.text,
            vector_from_bytes(r.embedding),
            tuple(int(e) for e in r.entities),
        )
        for r in rows
    }


PASSAGE_PROPOSITIONS = text(
    "SELECT id FROM propositions WHERE passage_id = ANY(:ids) ORDER BY passage_id, position, id"
)


def passage_propositions(engine: Engine, passage_ids: Sequence[int]) -> list[int]:
    """Ids of every unit of the given passages, passage by passage in reading order."""
    if not passage_ids:
        return []
    with transaction(engine) as session:
        return _ids(session.execute(PASSAGE_PROPOSITIONS, {"ids": _ids(passage_ids)}).scalars())


PASSAGE_COSINES = _with_query("""
SELECT id, 1 - (embedding <=> :q) AS cos
FROM passages
WHERE corpus_id = :corpus AND status = 'done' AND embedding IS NOT NULL
""")


def passage_cosines(engine: Engine, corpus_id: int, query: FloatVector) -> dict[int, float]:
    """Exact cosine of the query to every done passage with an embedding (a PPR dense prior)."""
    with transaction(engine) as session:
        rows = session.execute(PASSAGE_COSINES, {"q": query, "corpus": corpus_id})
        return {int(r[0]): float(r[1]) for r in rows}


ENTITY_UNIT_COSINES = _with_query("""
SELECT ep.entity_id, max(1 - (p.embedding <=> :q)) AS cos
FROM propositions p
JOIN entity_propositions ep ON ep.proposition_id = p.id
WHERE p.corpus_id = :corpus
GROUP BY ep.entity_id
""")
SOME_ENTITY_UNIT_COSINES = _with_query("""
SELECT ep.entity_id, max(1 - (p.embedding <=> :q)) AS cos
FROM entity_propositions ep
JOIN propositions p ON p.id = ep.proposition_id
WHERE p.corpus_id = :corpus AND ep.entity_id = ANY(:entities)
GROUP BY ep.entity_id
""")


def entity_unit_cosines(
    engine: Engine, corpus_id: int, query: FloatVector, entity_ids: Sequence[int] | None = None
) -> dict[int, float]:
    """Per entity (all, or the given ones), the best cosine of the query to a unit linking it.

    This is SA-RAG's "entity description" similarity: our entities have no descriptions, and the
    units that mention an entity are what the corpus says about it.
    """
    params: dict[str, object] = {"q": query, "corpus": corpus_id}
    statement = ENTITY_UNIT_COSINES
    if entity_ids is not None:
        if not entity_ids:
            return {}
        statement, params["entities"] = SOME_ENTITY_UNIT_COSINES, _ids(entity_ids)
    with transaction(engine) as session:
        return {int(r[0]): float(r[1]) for r in session.execute(statement, params)}


RELATION_COSINES = _with_query("""
SELECT DISTINCT ON (c.entity_a, c.entity_b)
       c.entity_a, c.entity_b, 1 - (p.embedding <=> :q) AS cos, p.id
FROM unnest(CAST(:a AS bigint[]), CAST(:b AS bigint[])) AS w(a, b)
JOIN entity_cooccurrences c ON c.entity_a = w.a AND c.entity_b = w.b
JOIN propositions p ON p.id = c.proposition_id
WHERE c.corpus_id = :corpus
ORDER BY c.entity_a, c.entity_b, p.embedding <=> :q, p.id
""")


def relation_cosines(
    engine: Engine, corpus_id: int, query: FloatVector, pairs: Iterable[tuple[int, int]]
) -> dict[tuple[int, int], tuple[float, int]]:
    """Per co-occurring pair, the best cosine of the query to a shared unit and that unit's id.

    Pairs are keyed (smaller id, larger id) whichever order they are given in; pairs that share no
    unit are absent. Ties go to the lower unit id.
    """
    wanted = sorted({(min(a, b), max(a, b)) for a, b in pairs if a != b})
    if not wanted:
        return {}
    params = {
        "q": query,
        "corpus": corpus_id,
        "a": [int(a) for a, _ in wanted],
        "b": [int(b) for _, b in wanted],
    }
    with transaction(engine) as session:
        rows = session.execute(RELATION_COSINES, params)
        return {(int(r[0]), int(r[1])): (float(r[2]), int(r[3])) for r in rows}
