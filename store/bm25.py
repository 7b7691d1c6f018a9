"""BM25 over the postings tables: the statements' shared CTEs, and propositions and passages by BM25."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from store.driver_rows import fetch_rows, id_list
from store.models import TS_CONFIG

BM25_K1 = 1.2
BM25_B = 0.75

# The BM25 of one kind of document, scored from its postings (store/posting_models.py): each
# query lexeme reads its rows by an index-only scan (passages: the key (corpus, lexeme, row)
# INCLUDE (tf, n_lexemes); units: the impact index, best term weight first, up to a cap), so no
# tsvector is read or parsed and no row is joined.
# A row's lexemes are unique in the key, so a lexeme's df is the number of its postings. The
# passages' is counted by a second index-only scan of the same key range (on a 12k-unit corpus
# that beat a window count over the scoring scan by about 15%). The units' is read from a table
# kept beside their postings (store/posting_models.py): counting a long list on every query cost
# the GRASP step ≈ 1 ms at 600k bench units, and the table's upkeep rides on the postings'
# statements under the corpus lock (docs/scale.md). df counts every posting, so the excluded
# (visited) rows, dropped afterwards, never change a word's rarity. A row's terms reach the sum in
# the query's lexeme order (the nested loop's), so rows with the same terms get bit-identical
# scores and their ties fall to id (the old per-row query summed in no fixed order: ties could
# split by 1 ulp).
# N and avgdl come from the corpus counters kept in the same transactions as the rows: the scores
# stay exact as passages are added or removed, with nothing to rebuild. The query's lexemes are
# those of to_tsvector (the configuration of the stored vectors), distinct, and matched as whole
# strings, so a compound lexeme ('state-of-the-art', URLs) finds its posting. The arithmetic is
# float8 (numeric ln is slow) and the expression is the one rank_bm25, the test oracle, agrees with.
# Each lexeme's idf is worked out once, beside its df, rather than on every posting, and avgdl is
# one value for the statement: the same float8s in the same products, so the scores are
# bit-identical, and on the 600k-unit bench corpus (lists of ≈10,000 postings) the statement's
# p50 fell from 4.0 to 3.5 ms (docs/scale.md).
_BM25_CTES = """
query AS (
    SELECT lexeme FROM unnest(tsvector_to_array(to_tsvector('{config}', :keywords))) AS lexeme
),
stats AS (
    SELECT greatest({n_col}, 1)::float8 AS n,
           greatest({lex_col}::float8 / greatest({n_col}, 1), 1) AS avgdl
    FROM corpora WHERE id = :corpus
),
weights AS (
    SELECT query.lexeme,
           ln(1 + (stats.n - frequency.df + 0.5) / (frequency.df + 0.5)) AS idf
    FROM query
    CROSS JOIN stats
    {frequency}
),
lexical AS (
    SELECT p.{row} AS id,
           sum(w.idf * p.tf * ({k1}::float8 + 1)
               / (p.tf + {k1}::float8
                  * (1 - {b}::float8 + {b}::float8 * p.n_lexemes / (SELECT avgdl FROM stats))))
               AS score
    FROM weights w
    {postings_read}
    GROUP BY p.{row}
    ORDER BY score DESC, p.{row}
    LIMIT :k
)"""


#: A word's df counted from its postings (the passages': only the BM25 baseline reads them).
_COUNTED_DF = """CROSS JOIN LATERAL (
        SELECT count(*)::float8 AS df FROM {postings} AS d
        WHERE d.corpus_id = :corpus AND d.lexeme = query.lexeme
    ) AS frequency"""
#: A unit word's df from the table kept beside the postings (store/posting_models.py); a word no
#: unit holds has no row, no idf and no postings.
_STORED_DF = """LEFT JOIN unit_lexeme_frequencies AS frequency
        ON frequency.corpus_id = :corpus AND frequency.lexeme = query.lexeme"""
#: Every posting of each query word: exact BM25 (the passages, for the BM25 baseline).
_EVERY_POSTING = """JOIN {postings} AS p
        ON p.corpus_id = :corpus AND p.lexeme = w.lexeme AND NOT (p.{row} = ANY(:exclude))"""
#: Each query word's `:cap` best unvisited postings by term weight, read in that order from the
#: impact index (store/posting_models.py). Exact while no word has more postings than the cap (on
#: the real corpora measured, the longest list was 682 units in MuSiQue and 5,073 in 2Wiki);
#: past it a long list contributes its best-weighted units only, so the cost of a word stops
#: growing with the corpus. The bench's 600k step p50 fell from 16.3–16.7 to 13.8–14.7 ms, and
#: its BM25 top 50 was the exact one for all 220 queries; 2Wiki's recall did not change
#: (docs/scale.md).
_BEST_POSTINGS = """CROSS JOIN LATERAL (
        SELECT d.{row}, d.tf, d.n_lexemes FROM {postings} AS d
        WHERE d.corpus_id = :corpus AND d.lexeme = w.lexeme AND NOT (d.{row} = ANY(:exclude))
        ORDER BY d.tf DESC, d.n_lexemes, d.{row}
        LIMIT :cap
    ) AS p"""
#: Postings read per query word by the units' BM25 (see `_BEST_POSTINGS`).
POSTINGS_CAP = 1000


def _bm25_ctes(postings: str, row: str, n_col: str, lex_col: str, units: bool) -> str:
    # Units: each word's best postings and the stored df; passages: every posting, df counted.
    read = (_BEST_POSTINGS if units else _EVERY_POSTING).format(postings=postings, row=row)
    frequency = _STORED_DF if units else _COUNTED_DF.format(postings=postings)
    return _BM25_CTES.format(
        frequency=frequency,
        config=TS_CONFIG,
        postings=postings,
        postings_read=read,
        row=row,
        n_col=n_col,
        lex_col=lex_col,
        k1=BM25_K1,
        b=BM25_B,
    )


_LEXICAL = "\nSELECT id, score FROM lexical ORDER BY score DESC, id"
PROPOSITION_CTES = _bm25_ctes(
    "proposition_postings", "proposition_id", "n_propositions", "n_proposition_lexemes", True
)

BM25_PROPOSITIONS = text("WITH" + PROPOSITION_CTES + _LEXICAL)


def bm25_propositions(
    session: Session,
    corpus: int,
    keywords: str,
    k: int,
    exclude: Sequence[int] = (),
    cap: int = POSTINGS_CAP,
) -> dict[int, float]:
    """Top-k propositions by BM25 over the keywords' English lexemes, as id → score.

    Each word contributes its `cap` best postings by term weight (exact below that; see
    `_BEST_POSTINGS`).

    BM25 stays in SQL rather than in rank_bm25 (which is its test oracle) because N, avgdl and df
    are exact in the same transaction as the rows (the postings are written with them), so there
    is no side index to rebuild as a corpus grows; visited rows are dropped after df is counted;
    the postings' key touches only the query's lexemes; and hybrid_candidates runs it in one round
    trip with the dense half.
    """
    if not keywords.strip():
        return {}
    rows = fetch_rows(
        session,
        BM25_PROPOSITIONS,
        {
            "keywords": keywords,
            "corpus": corpus,
            "k": k,
            "exclude": id_list(exclude),
            "cap": cap,
        },
    )
    return {int(r[0]): float(r[1]) for r in rows}


BM25_PASSAGES = text(
    "WITH"
    + _bm25_ctes("passage_postings", "passage_id", "n_passages", "n_passage_lexemes", False)
    + _LEXICAL
)


def bm25_passages(session: Session, corpus: int, query: str, k: int) -> dict[int, float]:
    """Top-k passages by BM25 over title and text, for the BM25 baseline (see bm25_propositions)."""
    if not query.strip():
        return {}
    rows = fetch_rows(
        session, BM25_PASSAGES, {"keywords": query, "corpus": corpus, "k": k, "exclude": []}
    )
    return {int(r[0]): float(r[1]) for r in rows}
