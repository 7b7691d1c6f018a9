"""BM25 postings upkeep: written and removed in the caller's transaction, beside their rows.

Every statement derives the postings server-side from the rows' stored `tsv` (one row per distinct
lexeme, tf = its number of positions), so the postings are exactly what the old per-row tsvector
scoring read, with no Python loop over lexemes. See store/models.py for the tables' shape.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

# A batch's units are found by passage (ix_propositions_passage): a passage is written once, under
# the entity lock, so these are exactly the units the batch has just inserted. Postings go in
# sorted in the key's order, so a batch walks the key's leaf pages once, in order, rather than
# jumping between them (it matters once the key outgrows the buffer cache).
INSERT_UNIT_POSTINGS = text("""
INSERT INTO proposition_postings (corpus_id, lexeme, proposition_id, tf, n_lexemes)
SELECT u.corpus_id, t.lexeme, u.id, cardinality(t.positions), u.n_lexemes
FROM propositions u, unnest(u.tsv) AS t
WHERE u.corpus_id = :corpus AND u.passage_id = ANY(:passages)
ORDER BY t.lexeme COLLATE "C"
""")
# Each unit lexeme's df (store/posting_models.py, UnitLexemeFrequency) moves with its postings:
# counted up from the same units in the same transaction, and down before they go. Every writer
# of a corpus holds its lock (store/corpus_lock.py), so these rows see one writer at a time.
COUNT_UNIT_LEXEMES = text("""
INSERT INTO unit_lexeme_frequencies (corpus_id, lexeme, df)
SELECT u.corpus_id, t.lexeme, count(*)
FROM propositions u, unnest(u.tsv) AS t
WHERE u.corpus_id = :corpus AND u.passage_id = ANY(:passages)
GROUP BY u.corpus_id, t.lexeme
ORDER BY t.lexeme COLLATE "C"
ON CONFLICT (corpus_id, lexeme) DO UPDATE SET df = unit_lexeme_frequencies.df + excluded.df
""")
# One pass over the removed units' lexemes: a lexeme they hold every posting of goes, the rest
# count down. The two row sets are disjoint in the statement's snapshot, so no row is touched twice.
UNCOUNT_UNIT_LEXEMES = text("""
WITH gone AS (
    SELECT t.lexeme, count(*) AS n
    FROM propositions u, unnest(u.tsv) AS t
    WHERE u.corpus_id = :corpus AND u.passage_id = ANY(:ids)
    GROUP BY t.lexeme
),
emptied AS (
    DELETE FROM unit_lexeme_frequencies f
    USING gone
    WHERE f.corpus_id = :corpus AND f.lexeme = gone.lexeme AND f.df <= gone.n
)
UPDATE unit_lexeme_frequencies f SET df = f.df - gone.n
FROM gone
WHERE f.corpus_id = :corpus AND f.lexeme = gone.lexeme AND f.df > gone.n
""")
INSERT_PASSAGE_POSTINGS = text("""
INSERT INTO passage_postings (corpus_id, lexeme, passage_id, tf, n_lexemes)
SELECT p.corpus_id, t.lexeme, p.id, cardinality(t.positions), p.n_lexemes
FROM passages p, unnest(p.tsv) AS t
WHERE p.corpus_id = :corpus AND p.id = ANY(:ids)
ORDER BY t.lexeme COLLATE "C"
""")

# Run before the rows go: each posting is found through the primary key from its row's own
# lexemes, so no index on the row id is needed (and none is upkept on every write).
DELETE_UNIT_POSTINGS = text("""
DELETE FROM proposition_postings pp
USING propositions u, unnest(u.tsv) AS t
WHERE u.corpus_id = :corpus AND u.passage_id = ANY(:ids)
  AND pp.corpus_id = u.corpus_id AND pp.lexeme = t.lexeme AND pp.proposition_id = u.id
""")
DELETE_PASSAGE_POSTINGS = text("""
DELETE FROM passage_postings pp
USING passages p, unnest(p.tsv) AS t
WHERE p.corpus_id = :corpus AND p.id = ANY(:ids)
  AND pp.corpus_id = p.corpus_id AND pp.lexeme = t.lexeme AND pp.passage_id = p.id
""")

# A removed corpus's postings: the key's first column (no foreign key cascades to them).
DELETE_CORPUS_UNIT_POSTINGS = text("DELETE FROM proposition_postings WHERE corpus_id = :corpus")
DELETE_CORPUS_PASSAGE_POSTINGS = text("DELETE FROM passage_postings WHERE corpus_id = :corpus")
DELETE_CORPUS_UNIT_LEXEMES = text("DELETE FROM unit_lexeme_frequencies WHERE corpus_id = :corpus")


def add_unit_postings(session: Session, corpus: int, passages: Sequence[int]) -> None:
    """Post the lexemes of the units of `passages` (just written in this transaction)."""
    if passages:
        given = {"corpus": corpus, "passages": list(passages)}
        session.execute(INSERT_UNIT_POSTINGS, given)
        session.execute(COUNT_UNIT_LEXEMES, given)


def add_passage_postings(session: Session, corpus: int, ids: Sequence[int]) -> None:
    """Post the lexemes of the passages `ids` (just inserted in this transaction)."""
    if ids:
        session.execute(INSERT_PASSAGE_POSTINGS, {"corpus": corpus, "ids": list(ids)})


def remove_postings(session: Session, corpus: int, passages: Sequence[int]) -> None:
    """Remove the postings of `passages` and of their units; call before deleting the rows."""
    if passages:
        given = {"corpus": corpus, "ids": list(passages)}
        session.execute(UNCOUNT_UNIT_LEXEMES, given)
        session.execute(DELETE_UNIT_POSTINGS, given)
        session.execute(DELETE_PASSAGE_POSTINGS, given)


def remove_corpus_postings(session: Session, corpus: int) -> None:
    """Remove every posting of the corpus, in the transaction that deletes it."""
    session.execute(DELETE_CORPUS_UNIT_POSTINGS, {"corpus": corpus})
    session.execute(DELETE_CORPUS_PASSAGE_POSTINGS, {"corpus": corpus})
    session.execute(DELETE_CORPUS_UNIT_LEXEMES, {"corpus": corpus})
