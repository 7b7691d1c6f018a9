"""BM25's postings tables: one row per retrieval unit or passage and distinct lexeme."""

from __future__ import annotations

from sqlalchemy import BigInteger, Index, Integer, PrimaryKeyConstraint, Text
from sqlalchemy import text as sql_text
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base

# BM25's postings: one row per (retrieval unit or passage, distinct lexeme of its stored `tsv`),
# with the lexeme's occurrence count and the row's distinct-lexeme length copied in, so a query
# scores a lexeme's rows from one index alone (an index-only scan, no join, no tsvector parsed):
# a passage's from the primary key, a unit's from `UNIT_IMPACT_INDEX` below. The unit key still
# carries the INCLUDE columns it scored from before that index; only the df count and the
# deletions read it now, and narrowing it would mean a migration that rebuilds the key of every
# store. They are written and removed in the same transactions as their rows, from the stored
# `tsv` itself (store/postings.py, called by the writes and the deletion); `grasp corpus check`
# compares them with a recount. There is no foreign key, to the row or to the corpus: a cascade
# from the row would need a second index on the row id (more upkeep on every bulk write), and the
# check of a key to the corpus runs once per inserted posting, which measured as roughly half the
# cost of posting a batch. The deletions remove them instead: a passage's through this key from the
# removed rows' own lexemes, a corpus's by the key's first column (store/postings.py).
# The stored `tsv` columns stay (the postings are derived and checked from them) but need no GIN
# index any more: nothing searches them.
# Two tables of one shape rather than one with a kind column: keys stay narrow, the two id spaces
# are separate sequences, and each table's statistics describe one kind of document.
#: Collation of the lexeme column: bytewise comparisons, the cheapest, and equality is the same.
LEXEME_COLLATION = "C"
#: A unit lexeme's postings best term weight first (more occurrences, then fewer lexemes: BM25's
#: weight of a word in a unit, for any avgdl, when tf is equal), so the GRASP step reads a long
#: list's best postings and stops (store/bm25.py). Passages keep the key alone: only the BM25
#: baseline scores them, exactly.
UNIT_IMPACT_INDEX = "ix_proposition_postings_impact"


class PropositionPosting(Base):
    """A lexeme of a retrieval unit: tf = its occurrences, n_lexemes = the unit's length."""

    __tablename__ = "proposition_postings"
    __table_args__ = (
        PrimaryKeyConstraint(
            "corpus_id",
            "lexeme",
            "proposition_id",
            name="pk_proposition_postings",
            postgresql_include=["tf", "n_lexemes"],
        ),
        Index(
            UNIT_IMPACT_INDEX,
            "corpus_id",
            "lexeme",
            sql_text("tf DESC"),
            "n_lexemes",
            "proposition_id",
        ),
    )

    corpus_id: Mapped[int] = mapped_column(Integer)
    lexeme: Mapped[str] = mapped_column(Text(collation=LEXEME_COLLATION))
    proposition_id: Mapped[int] = mapped_column(BigInteger)
    tf: Mapped[int] = mapped_column(Integer)
    n_lexemes: Mapped[int] = mapped_column(Integer)


class PassagePosting(Base):
    """A lexeme of a passage (title and text): tf = its occurrences, n_lexemes = its length."""

    __tablename__ = "passage_postings"
    __table_args__ = (
        PrimaryKeyConstraint(
            "corpus_id",
            "lexeme",
            "passage_id",
            name="pk_passage_postings",
            postgresql_include=["tf", "n_lexemes"],
        ),
    )

    corpus_id: Mapped[int] = mapped_column(Integer)
    lexeme: Mapped[str] = mapped_column(Text(collation=LEXEME_COLLATION))
    passage_id: Mapped[int] = mapped_column(BigInteger)
    tf: Mapped[int] = mapped_column(Integer)
    n_lexemes: Mapped[int] = mapped_column(Integer)


class UnitLexemeFrequency(Base):
    """How many of a corpus's units hold a lexeme: BM25's df for the units, kept with their postings.

    The GRASP step reads it rather than counting a long posting list on every query (≈ 1 ms of the
    step at 600k bench units, docs/scale.md). It is upkept in the postings' own statements and
    transactions, under the corpus lock (store/postings.py), and `grasp corpus check` recounts it.
    """

    __tablename__ = "unit_lexeme_frequencies"
    __table_args__ = (
        PrimaryKeyConstraint(
            "corpus_id", "lexeme", name="pk_unit_lexeme_frequencies", postgresql_include=["df"]
        ),
    )

    corpus_id: Mapped[int] = mapped_column(Integer)
    lexeme: Mapped[str] = mapped_column(Text(collation=LEXEME_COLLATION))
    df: Mapped[int] = mapped_column(Integer)
