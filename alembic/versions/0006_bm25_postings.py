"""BM25 postings: one row per (unit or passage, distinct lexeme), backfilled from the stored tsv

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24

BM25 used to unnest every matching row's tsvector at query time; it now reads the postings of the
query's lexemes by an index-only scan of the primary key (store/retrieval.py). Corpora indexed
before this revision get their postings here, server-side, from the same stored `tsv` columns the
write path posts from, so the scores are unchanged. The key is built after the backfill (one
sorted build instead of one insertion per posting). The GIN indexes on the `tsv` columns served
only the old BM25 query, so they go (no upkeep on every write); a downgrade rebuilds them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the write path's statements (store/postings.py), over every stored row.
BACKFILL_UNIT_POSTINGS = """
INSERT INTO proposition_postings (corpus_id, lexeme, proposition_id, tf, n_lexemes)
SELECT u.corpus_id, t.lexeme, u.id, cardinality(t.positions), u.n_lexemes
FROM propositions u, unnest(u.tsv) AS t
"""
BACKFILL_PASSAGE_POSTINGS = """
INSERT INTO passage_postings (corpus_id, lexeme, passage_id, tf, n_lexemes)
SELECT p.corpus_id, t.lexeme, p.id, cardinality(t.positions), p.n_lexemes
FROM passages p, unnest(p.tsv) AS t
"""
ADD_KEY = """
ALTER TABLE {table} ADD CONSTRAINT pk_{table}
PRIMARY KEY (corpus_id, lexeme, {row}) INCLUDE (tf, n_lexemes)
"""
GIN_INDEXES = (("ix_propositions_tsv", "propositions"), ("ix_passages_tsv", "passages"))
TABLES = (
    ("proposition_postings", "proposition_id", BACKFILL_UNIT_POSTINGS),
    ("passage_postings", "passage_id", BACKFILL_PASSAGE_POSTINGS),
)


def upgrade() -> None:
    for table, row, backfill in TABLES:
        op.create_table(
            table,
            sa.Column("corpus_id", sa.Integer(), nullable=False),
            sa.Column("lexeme", sa.Text(collation="C"), nullable=False),
            sa.Column(row, sa.BigInteger(), nullable=False),
            sa.Column("tf", sa.Integer(), nullable=False),
            sa.Column("n_lexemes", sa.Integer(), nullable=False),
        )
        op.execute(backfill)
        op.execute(ADD_KEY.format(table=table, row=row))
    for index, table in GIN_INDEXES:
        op.drop_index(index, table_name=table, postgresql_using="gin")


def downgrade() -> None:
    for index, table in GIN_INDEXES:
        op.create_index(index, table, ["tsv"], unique=False, postgresql_using="gin")
    for table, _, _ in TABLES:
        op.drop_table(table)
