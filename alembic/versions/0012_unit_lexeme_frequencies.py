"""each unit lexeme's df kept in a table beside the postings: the GRASP step stops counting it

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27

BM25 over the units reads a query word's document frequency from this table instead of counting
the word's postings on every query (store/bm25.py); the postings' writes and deletions keep it
(store/postings.py). Filled here from the postings of every corpus.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "unit_lexeme_frequencies"


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("lexeme", sa.Text(collation="C"), nullable=False),
        sa.Column("df", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(
            "corpus_id", "lexeme", name="pk_unit_lexeme_frequencies", postgresql_include=["df"]
        ),
    )
    op.execute(
        f"INSERT INTO {TABLE} (corpus_id, lexeme, df) "
        "SELECT corpus_id, lexeme, count(*) FROM proposition_postings GROUP BY corpus_id, lexeme"
    )


def downgrade() -> None:
    op.drop_table(TABLE)
