"""Identifiers of any length: corpus names, embedder and model names, run, node and agent ids.

A run id embeds a dataset's own question id (LongBench `_id`s are 48 hex characters, and the eval
thread id carries one twice), so a length cap on these columns lost questions after their tokens
were spent. PostgreSQL stores `text` and `varchar(n)` alike; only the cap goes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: (table, column, the old cap)
CAPPED = (
    ("corpora", "name", 200),
    ("corpora", "embedder", 200),
    ("llm_calls", "run_id", 100),
    ("llm_calls", "node", 100),
    ("llm_calls", "agent_id", 100),
    ("llm_calls", "model", 200),
    ("llm_cache", "model", 200),
)


def upgrade() -> None:
    for table, column, cap in CAPPED:
        op.alter_column(table, column, type_=sa.Text(), existing_type=sa.String(cap))


def downgrade() -> None:
    # Values longer than the old caps would not fit back: refuse rather than cut them.
    for table, column, cap in CAPPED:
        op.alter_column(table, column, type_=sa.String(cap), existing_type=sa.Text())
