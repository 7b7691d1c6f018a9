"""Retrieval queries: dense (HNSW) and hybrid search, entity links, entity propositions, passages.

BM25 lives in store/bm25.py.

Every statement is a named constant beside the function that runs it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sqlalchemy import text
from sqlalchemy.orm import Session

from store.bm25 import POSTINGS_CAP, PROPOSITION_CTES
from store.driver_rows import fetch_rows, id_list
from store.models import UNIT_ANN_DISTANCE
from store.scoring import EntityLink

FloatVector = npt.NDArray[np.float32]


def vector_literal(vector: FloatVector) -> str:
    """pgvector's text form, so queries can bind one parameter and cast it."""
    as_float32 = np.ascontiguousarray(vector, dtype=np.float32)
    return _literal_of(as_float32.tobytes())


@functools.lru_cache(maxsize=64)
def _literal_of(raw: bytes) -> str:
    # One retrieval step sends the same query vector in several statements (and the search and the
    # vote of a round share it): formatting 384 numbers each time cost ≈0.3 ms a statement.
    return "[" + ",".join(f"{x:.6g}" for x in np.frombuffer(raw, dtype=np.float32)) + "]"


@dataclass(frozen=True)
class PassageText:
    """A passage's title and text, as evidence lists and answer prompts show it."""

    id: int
    title: str
    text: str


#: The units nearest a query, ordered by `distance` (the graph's, or the float4 cosine's for an
#: exact scan: store/exact_search.py).
NEAREST_PROPOSITIONS = """
SELECT id, 1 - (embedding <=> CAST(:q AS vector)) AS cos
FROM propositions
WHERE corpus_id = :corpus AND NOT (id = ANY(:exclude))
ORDER BY {distance}
LIMIT :k
"""
DENSE_PROPOSITIONS = text(NEAREST_PROPOSITIONS.format(distance=UNIT_ANN_DISTANCE))


def dense_propositions(
    session: Session, corpus: int, query: FloatVector, k: int, exclude: Sequence[int] = ()
) -> dict[int, float]:
    """Top-k propositions by cosine (HNSW), as id → cosine."""
    rows = fetch_rows(
        session,
        DENSE_PROPOSITIONS,
        {"q": vector_literal(query), "corpus": corpus, "k": k, "exclude": id_list(exclude)},
    )
    return {int(r[0]): float(r[1]) for r in rows}


# Dense top-k and BM25 top-k in one statement (one round trip, one vector parse): the cosine of
# every candidate, the BM25 score of the lexical ones (NULL for the dense-only ones), and each
# candidate's text and passage, which the entity scoring shows and the hits are grouped by.
HYBRID_PROPOSITIONS = text(
    "WITH"
    + PROPOSITION_CTES
    + """,
dense AS (
    SELECT id, 1 - (embedding <=> CAST(:q AS vector)) AS cos
    FROM propositions
    WHERE corpus_id = :corpus AND NOT (id = ANY(:exclude))
    ORDER BY """
    + UNIT_ANN_DISTANCE
    + """
    LIMIT :k
)
SELECT u.id, coalesce(d.cos, 1 - (u.embedding <=> CAST(:q AS vector))), l.score, u.text,
       u.passage_id
FROM dense d FULL JOIN lexical l ON l.id = d.id
JOIN propositions u ON u.id = coalesce(d.id, l.id)
"""
)


@dataclass(frozen=True)
class HybridCandidates:
    """Dense top-k ∪ BM25 top-k: every candidate's cosine and (text, passage), BM25 where lexical."""

    cosine: dict[int, float]
    lexical: dict[int, float]
    texts: dict[int, tuple[str, int]]


def hybrid_candidates(
    session: Session,
    corpus: int,
    query: FloatVector,
    keywords: str,
    k: int,
    exclude: Sequence[int] = (),
) -> HybridCandidates:
    """Dense top-k ∪ BM25 top-k over propositions, in one round trip."""
    rows = fetch_rows(
        session,
        HYBRID_PROPOSITIONS,
        {
            "q": vector_literal(query),
            "keywords": keywords,
            "corpus": corpus,
            "k": k,
            "exclude": id_list(exclude),
            "cap": POSTINGS_CAP,
        },
    )
    return HybridCandidates(
        cosine={int(r[0]): float(r[1]) for r in rows},
        lexical={int(r[0]): float(r[2]) for r in rows if r[2] is not None},
        texts={int(r[0]): (r[3], int(r[4])) for r in rows},
    )


DENSE_PASSAGES = text("""
SELECT id, 1 - (embedding <=> CAST(:q AS vector)) AS cos
FROM passages
WHERE corpus_id = :corpus AND embedding IS NOT NULL
ORDER BY embedding <=> CAST(:q AS vector)
LIMIT :k
""")


#: HNSW depth of the baselines' small top-k searches (dense RAG, PPR's and PropRAG's seed units).
#: At the engine's 100 they missed neighbours an exact scan finds, in tables that hold several
#: corpora: `musique_train` dense R@5 0.582 against 0.612 exact, PPR 0.573 against 0.633; at 400
#: each matched the exact scan. GRASP's step keeps 100: its recall was the same at 400 on all
#: three sets, and its search four times slower (docs/experiments.md).
DEEP_EF_SEARCH = 400
SET_EF_SEARCH = text("SELECT set_config('hnsw.ef_search', :ef, true)")


def set_ef_search(session: Session, ef: int) -> None:
    """Let this transaction's HNSW searches look at `ef` candidates (the engine sets 100)."""
    session.execute(SET_EF_SEARCH, {"ef": str(ef)})


def search_deeply(session: Session) -> None:
    """Let this transaction's HNSW searches look at `DEEP_EF_SEARCH` candidates."""
    set_ef_search(session, DEEP_EF_SEARCH)


def dense_passages(session: Session, corpus: int, query: FloatVector, k: int) -> dict[int, float]:
    """Top-k passages by cosine of their own embeddings (the dense baselines)."""
    rows = fetch_rows(
        session, DENSE_PASSAGES, {"q": vector_literal(query), "corpus": corpus, "k": k}
    )
    return {int(r[0]): float(r[1]) for r in rows}


ENTITY_LINKS = text("""
WITH linked AS (
    SELECT entity_id, array_agg(proposition_id ORDER BY proposition_id) AS props
    FROM entity_propositions WHERE proposition_id = ANY(:ids)
    GROUP BY entity_id
)
SELECT e.id, e.name, e.type, e.degree, linked.props
FROM linked JOIN entities e ON e.id = linked.entity_id
WHERE NOT (e.id = ANY(:exclude))
""")


def entity_links(
    session: Session, proposition_ids: Sequence[int], exclude_entities: Sequence[int] = ()
) -> list[EntityLink]:
    """Entities linked to any of the propositions, with degree and the linked subset."""
    if not proposition_ids:
        return []
    rows = fetch_rows(
        session,
        ENTITY_LINKS,
        {"ids": id_list(proposition_ids), "exclude": id_list(exclude_entities)},
    )
    return [EntityLink(int(r[0]), r[1], r[2], int(r[3]), tuple(int(p) for p in r[4])) for r in rows]


# The inner order is the unit graph's (halfvec), so that for a hub entity the planner can walk the
# graph rather than score every unit (600k bench: ≈ 50 against ≈ 190 ms); the outer order is the
# float4 cosine's, which the vote's ranks use (docs/scale.md).
ENTITY_PROPOSITIONS = text(
    """
SELECT id, passage_id, cos FROM (
    SELECT p.id, p.passage_id, 1 - (p.embedding <=> CAST(:q AS vector)) AS cos
    FROM propositions p
    WHERE p.id IN (SELECT proposition_id FROM entity_propositions WHERE entity_id = ANY(:entities))
      AND NOT (p.id = ANY(:exclude))
    ORDER BY p."""
    + UNIT_ANN_DISTANCE
    + """, p.id
    LIMIT :limit
) AS nearest
ORDER BY cos DESC, id
"""
)


def entity_propositions(
    session: Session,
    entities: Sequence[int],
    query: FloatVector,
    exclude: Sequence[int] = (),
    limit: int = 1000,
) -> list[tuple[int, int, float]]:
    """Propositions of the entities ranked by cosine: (proposition, passage, cosine), best first."""
    if not entities:
        return []
    rows = fetch_rows(
        session,
        ENTITY_PROPOSITIONS,
        {
            "q": vector_literal(query),
            "entities": id_list(entities),
            "exclude": id_list(exclude),
            "limit": limit,
        },
    )
    return [(int(r[0]), int(r[1]), float(r[2])) for r in rows]


PROPOSITION_TEXTS = text("SELECT id, text, passage_id FROM propositions WHERE id = ANY(:ids)")


def proposition_texts(session: Session, ids: Sequence[int]) -> dict[int, tuple[str, int]]:
    """id → (text, passage id), for showing propositions as evidence."""
    if not ids:
        return {}
    rows = fetch_rows(session, PROPOSITION_TEXTS, {"ids": id_list(ids)})
    return {int(r[0]): (r[1], int(r[2])) for r in rows}


PASSAGE_TEXTS = text("SELECT id, title, text FROM passages WHERE id = ANY(:ids)")


def passage_texts(session: Session, ids: Sequence[int]) -> list[PassageText]:
    """Passages in the order of `ids` (a ranking), to show as evidence."""
    if not ids:
        return []
    rows = fetch_rows(session, PASSAGE_TEXTS, {"ids": id_list(ids)})
    by_id = {int(r[0]): PassageText(int(r[0]), r[1], r[2]) for r in rows}
    return [by_id[i] for i in ids if i in by_id]


# A passage's text and its propositions' ids in one round trip: reading a passage marks them all
# visited, and the vote needs both for its winners.
PASSAGES_WITH_PROPOSITIONS = text("""
SELECT p.id, p.title, p.text,
       ARRAY(SELECT u.id FROM propositions u WHERE u.passage_id = p.id ORDER BY u.id)
FROM passages p WHERE p.id = ANY(:ids)
""")


def passages_with_propositions(
    session: Session, ids: Sequence[int]
) -> tuple[list[PassageText], list[int]]:
    """Passages in the order of `ids` (a ranking), and the ids of all their propositions."""
    if not ids:
        return [], []
    rows = fetch_rows(session, PASSAGES_WITH_PROPOSITIONS, {"ids": id_list(ids)})
    by_id = {int(r[0]): PassageText(int(r[0]), r[1], r[2]) for r in rows}
    return [by_id[i] for i in ids if i in by_id], [int(u) for r in rows for u in r[3]]
