"""passage titles indexed case-folded: the page term looks up the passages an entity names

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26

The GRASP step's page term (store/bridge.py) finds, for each entity of the best hit's passage,
the passages whose title is that entity's name, case-insensitively. Without an index that is a
scan of the corpus's passages per step.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_passages_corpus_title"


def upgrade() -> None:
    op.create_index(INDEX, "passages", ["corpus_id", sa.text("lower(title)")])


def downgrade() -> None:
    op.drop_index(INDEX, table_name="passages")
