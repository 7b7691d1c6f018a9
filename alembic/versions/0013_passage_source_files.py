"""a folder source records each passage's file in it: a citation names the file, not the folder

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-30

`grasp index ~/notes` records its passages under the folder (the label a re-index mirrors); the
new column holds the file each passage came from, relative to that folder, so a citation shows
`~/notes/films/blue-harbor.md`. Null for a file source and for rows written before it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("passage_sources", sa.Column("file", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("passage_sources", "file")
