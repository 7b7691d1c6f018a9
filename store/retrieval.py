"""Retrieval queries: dense (HNSW) and BM25 search, entity links, entity propositions, passages.

Every statement is a named constant beside the function that runs it.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Dialect, TextClause, text
from sqlalchemy.orm import Session

from store.models import TS_CONFIG
from store.scoring import EntityLink

FloatVector = npt.NDArray[np.float32]
BM25_K1 = 1.2
BM25_B = 0.75


def vector_literal(vector: FloatVector) -> str:
    """pgvector's text form, so queries can bind one parameter and cast it."""
    as_float32 = np.ascontiguousarray(vector, dtype=np.float32)
    return _literal_of(as_float32.tobytes())


@functools.lru_cache(maxsize=64)
def _literal_of(raw: bytes) -> str:
    # One retrieval step sends the same query vector in several statements (and the search and the
    # vote of a round share it): formatting 384 numbers each time cost ≈0.3 ms a statement.
    return "[" + ",".join(f"{x:.6g}" for x in np.frombuffer(raw, dtype=np.float32)) + "]"


def _ids(values: Sequence[int]) -> list[int]:
    return [int(v) for v in values]


@functools.cache
def _driver_sql(statement: TextClause, dialect: Dialect) -> str:
    return str(statement.compile(dialect=dialect))


def _rows(session: Session, statement: TextClause, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """All rows of `statement`, run on the session's own psycopg connection (same transaction).

    Retrieval runs several statements per agent step and lives on its latency: going around
    SQLAlchemy's execution and result layers saves ≈0.5 ms a statement (measured on 60k units).
    """
    connection = session.connection()
    driver = connection.connection.driver_connection
    if driver is None:  # a checked-out connection always has one; this says so to the type checker
        raise RuntimeError("the session's connection has no driver connection")
    with driver.cursor() as cursor:
        cursor.execute(_driver_sql(statement, connection.dialect), params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows


@dataclass(frozen=True)
class PassageText:
    """A passage's title and text, as evidence lists and answer prompts show it."""

    id: int
    title: str
    text: str


# The BM25 of one kind of document, scored from its postings (store/models.py): each query
# lexeme reads its rows from the postings' primary key (corpus, lexeme, row) INCLUDE (tf,
# n_lexemes) by an index-only scan, so no tsvector is read or parsed and no row is joined.
# A row's lexemes are unique in the key, so a lexeme's df is the number of its postings: counted
# by a second index-only scan of the same key range. Measured with EXPLAIN ANALYZE on a 12k-unit
# corpus, that beat a window count over the scoring scan (which buffers every row, and sorts when
# lexemes share one scan) by about 15%, and a df counter table beat it by only ~0.1 ms on typical
# queries (~1 ms on one matching two thirds of the units) while needing upkeep, and row locks, on
# every write and deletion. df counts every posting, so the excluded (visited) rows, dropped
# afterwards, never change a word's rarity. A row's terms reach the sum in the query's lexeme
# order (the nested loop's), so rows with the same terms get bit-identical scores and their ties
# fall to id (the old per-row query summed in no fixed order: ties could split by 1 ulp).
# N and avgdl come from the corpus counters kept in the same transactions as the rows: the scores
# stay exact as passages are added or removed, with nothing to rebuild. The query's lexemes are
# those of to_tsvector (the configuration of the stored vectors), distinct, and matched as whole
# strings, so a compound lexeme ('state-of-the-art', URLs) finds its posting. The arithmetic is
# float8 (numeric ln is slow) and the expression is the one rank_bm25, the test oracle, agrees with.
_BM25_CTES = """
query AS (
    SELECT lexeme FROM unnest(tsvector_to_array(to_tsvector('{config}', :keywords))) AS lexeme
),
stats AS (
    SELECT greatest({n_col}, 1)::float8 AS n,
           greatest({lex_col}::float8 / greatest({n_col}, 1), 1) AS avgdl
    FROM corpora WHERE id = :corpus
),
matches AS (
    SELECT p.{row} AS id, p.n_lexemes, p.tf, frequency.df
    FROM query
    CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM {postings} AS d
        WHERE d.corpus_id = :corpus AND d.lexeme = query.lexeme
    ) AS frequency
    JOIN {postings} AS p ON p.corpus_id = :corpus AND p.lexeme = query.lexeme
),
lexical AS (
    SELECT m.id,
           sum(ln(1 + (stats.n - m.df + 0.5) / (m.df + 0.5))
               * m.tf * ({k1}::float8 + 1)
               / (m.tf + {k1}::float8 * (1 - {b}::float8 + {b}::float8 * m.n_lexemes / stats.avgdl)))
               AS score
    FROM matches m, stats
    WHERE NOT (m.id = ANY(:exclude))
    GROUP BY m.id
    ORDER BY score DESC, m.id
    LIMIT :k
)"""


def _bm25_ctes(postings: str, row: str, n_col: str, lex_col: str) -> str:
    return _BM25_CTES.format(
        config=TS_CONFIG,
        postings=postings,
        row=row,
        n_col=n_col,
        lex_col=lex_col,
        k1=BM25_K1,
        b=BM25_B,
    )


_LEXICAL = "\nSELECT id, score FROM lexical ORDER BY score DESC, id"
_PROPOSITION_CTES = _bm25_ctes(
    "proposition_postings", "proposition_id", "n_propositions", "n_proposition_lexemes"
)

BM25_PROPOSITIONS = text("WITH" + _PROPOSITION_CTES + _LEXICAL)


def bm25_propositions(
    session: Session, corpus: int, keywords: str, k: int, exclude: Sequence[int] = ()
) -> dict[int, float]:
    """Top-k propositions by BM25 over the keywords' English lexemes, as id → score.

    BM25 stays in SQL rather than in rank_bm25 (which is its test oracle) because N, avgdl and df
    are exact in the same transaction as the rows (the postings are written with them), so there
    is no side index to rebuild as a corpus grows; visited rows are dropped after df is counted;
    the postings' key touches only the query's lexemes; and hybrid_candidates runs it in one round
    trip with the dense half.
    """
    if not keywords.strip():
        return {}
    rows = _rows(
        session,
        BM25_PROPOSITIONS,
        {"keywords": keywords, "corpus": corpus, "k": k, "exclude": _ids(exclude)},
    )
    return {int(r[0]): float(r[1]) for r in rows}


BM25_PASSAGES = text(
    "WITH"
    + _bm25_ctes("passage_postings", "passage_id", "n_passages", "n_passage_lexemes")
    + _LEXICAL
)


def bm25_passages(session: Session, corpus: int, query: str, k: int) -> dict[int, float]:
    """Top-k passages by BM25 over title and text, for the BM25 baseline (see bm25_propositions)."""
    if not query.strip():
        return {}
    rows = _rows(
        session, BM25_PASSAGES, {"keywords": query, "corpus": corpus, "k": k, "exclude": []}
    )
    return {int(r[0]): float(r[1]) for r in rows}


DENSE_PROPOSITIONS = text("""
SELECT id, 1 - (embedding <=> CAST(:q AS vector)) AS cos
FROM propositions
WHERE corpus_id = :corpus AND NOT (id = ANY(:exclude))
ORDER BY embedding <=> CAST(:q AS vector)
LIMIT :k
""")


def dense_propositions(
    session: Session, corpus: int, query: FloatVector, k: int, exclude: Sequence[int] = ()
) -> dict[int, float]:
    """Top-k propositions by cosine (HNSW), as id → cosine."""
    rows = _rows(
        session,
        DENSE_PROPOSITIONS,
        {"q": vector_literal(query), "corpus": corpus, "k": k, "exclude": _ids(exclude)},
    )
    return {int(r[0]): float(r[1]) for r in rows}


# Dense top-k and BM25 top-k in one statement (one round trip, one vector parse): the cosine of
# every candidate, the BM25 score of the lexical ones (NULL for the dense-only ones), and each
# candidate's text and passage, which the entity scoring shows and the hits are grouped by.
HYBRID_PROPOSITIONS = text(
    "WITH"
    + _PROPOSITION_CTES
    + """,
dense AS (
    SELECT id, 1 - (embedding <=> CAST(:q AS vector)) AS cos
    FROM propositions
    WHERE corpus_id = :corpus AND NOT (id = ANY(:exclude))
    ORDER BY embedding <=> CAST(:q AS vector)
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
    rows = _rows(
        session,
        HYBRID_PROPOSITIONS,
        {
            "q": vector_literal(query),
            "keywords": keywords,
            "corpus": corpus,
            "k": k,
            "exclude": _ids(exclude),
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


def dense_passages(session: Session, corpus: int, query: FloatVector, k: int) -> dict[int, float]:
    """Top-k passages by cosine of their own embeddings (the dense baselines)."""
    rows = _rows(session, DENSE_PASSAGES, {"q": vector_literal(query), "corpus": corpus, "k": k})
    return {int(r[0]): float(r[1]) for r in rows}


ENTITY_LINKS = text("""
WITH linked AS (
    SELECT entity_id, array_agg(proposition_id ORDER BY proposition_id) AS props
    FROM entity_propositions WHERE proposition_id = ANY(:ids)
    GROUP BY entity_id
)
SELECT e.id, e.name, e.type,
       (SELECT count(*) FROM entity_propositions ep WHERE ep.entity_id = e.id) AS degree,
       linked.props
FROM linked JOIN entities e ON e.id = linked.entity_id
WHERE NOT (e.id = ANY(:exclude))
""")


def entity_links(
    session: Session, proposition_ids: Sequence[int], exclude_entities: Sequence[int] = ()
) -> list[EntityLink]:
    """Entities linked to any of the propositions, with degree and the linked subset."""
    if not proposition_ids:
        return []
    rows = _rows(
        session, ENTITY_LINKS, {"ids": _ids(proposition_ids), "exclude": _ids(exclude_entities)}
    )
    return [EntityLink(int(r[0]), r[1], r[2], int(r[3]), tuple(int(p) for p in r[4])) for r in rows]


ENTITY_PROPOSITIONS = text("""
SELECT p.id, p.passage_id, 1 - (p.embedding <=> CAST(:q AS vector)) AS cos
FROM propositions p
WHERE p.id IN (SELECT proposition_id FROM entity_propositions WHERE entity_id = ANY(:entities))
  AND NOT (p.id = ANY(:exclude))
ORDER BY p.embedding <=> CAST(:q AS vector), p.id
LIMIT :limit
""")


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
    rows = _rows(
        session,
        ENTITY_PROPOSITIONS,
        {
            "q": vector_literal(query),
            "entities": _ids(entities),
            "exclude": _ids(exclude),
            "limit": limit,
        },
    )
    return [(int(r[0]), int(r[1]), float(r[2])) for r in rows]


PROPOSITION_TEXTS = text("SELECT id, text, passage_id FROM propositions WHERE id = ANY(:ids)")


def proposition_texts(session: Session, ids: Sequence[int]) -> dict[int, tuple[str, int]]:
    """id → (text, passage id), for showing propositions as evidence."""
    if not ids:
        return {}
    rows = _rows(session, PROPOSITION_TEXTS, {"ids": _ids(ids)})
    return {int(r[0]): (r[1], int(r[2])) for r in rows}


PASSAGE_TEXTS = text("SELECT id, title, text FROM passages WHERE id = ANY(:ids)")


def passage_texts(session: Session, ids: Sequence[int]) -> list[PassageText]:
    """Passages in the order of `ids` (a ranking), to show as evidence."""
    if not ids:
        return []
    rows = _rows(session, PASSAGE_TEXTS, {"ids": _ids(ids)})
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
    rows = _rows(session, PASSAGES_WITH_PROPOSITIONS, {"ids": _ids(ids)})
    by_id = {int(r[0]): PassageText(int(r[0]), r[1], r[2]) for r in rows}
    return [by_id[i] for i in ids if i in by_id], [int(u) for r in rows for u in r[3]]
