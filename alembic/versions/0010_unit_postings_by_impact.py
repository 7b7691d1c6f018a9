"""unit postings indexed best term weight first: the GRASP step reads a long list's best postings

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

BM25 in the GRASP step reads at most a bounded number of postings per query word, the ones with
the highest term weight (store/bm25.py), so its cost stops growing with the corpus. This index
keeps each word's unit postings in that order (more occurrences first, then shorter units).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_proposition_postings_impact"


def upgrade() -> None:
    op.create_index(
        INDEX,
        "proposition_postings",
        ["corpus_id", "lexeme", sa.text("tf DESC"), "n_lexemes", "proposition_id"],
    )


def downgrade() -> None:
    op.drop_index(INDEX, table_name="proposition_postings")
