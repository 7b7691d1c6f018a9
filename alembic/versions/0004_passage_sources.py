"""passage sources: which indexed files hold each passage, so a re-index can mirror a file

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23

A passage is still keyed by (corpus, content hash); this table records every source (a file or
folder path) that holds it. Re-indexing a source removes the passages that source no longer
holds unless another source still does, and `grasp delete --source` does the same for every
passage of the source. Passages indexed before this revision have no source until a re-index of
their file links them, so no passage is ever removed on a guess.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "passage_sources",
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.BigInteger(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("passage_id", "source"),
    )
    op.create_index(
        "ix_passage_sources_corpus_source", "passage_sources", ["corpus_id", "source"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_passage_sources_corpus_source", table_name="passage_sources")
    op.drop_table("passage_sources")
