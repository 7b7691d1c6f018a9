"""failed LLM calls: the ledger keeps attempts that failed, flagged, with the tokens they cost

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23

A retried provider error (429, 5xx, time-out) and a reply that could not be parsed (truncated,
invalid or empty JSON) are each billed by the provider; the ledger now records them as rows
with `failed` set, so token totals include them and a reader can tell them from answers used.
Rows written before this revision were all successful calls, hence the default.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "llm_calls",
        sa.Column("failed", sa.Boolean(), nullable=False, server_default=sa.false()),
    )


def downgrade() -> None:
    op.drop_column("llm_calls", "failed")
