"""the units' HNSW graph holds halfvec: half the memory, a faster walk at scale

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

The graph is rebuilt over `embedding::halfvec(384)` (store/models.py, `UNIT_ANN_DISTANCE`); the
stored float4 vectors do not change. A unit index that already has this definition (built ahead,
for instance with CREATE INDEX CONCURRENTLY, to keep serving meanwhile) is kept.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEX = "ix_propositions_embedding_hnsw"
DEFINITION = sa.text("SELECT indexdef FROM pg_indexes WHERE indexname = :name")
# In the default 64 MB a graph spills to row-by-row inserts past a few tens of thousands of rows;
# the bulk loads' own builds take the same memory (store/vector_indexes.py).
BUILD_MEMORY = sa.text("SET LOCAL maintenance_work_mem = '2GB'")


def _rebuild(key: str, opclass: str) -> None:
    bind = op.get_bind()
    found = bind.execute(DEFINITION, {"name": INDEX}).scalar()
    if found is not None and opclass in found:
        return
    bind.execute(BUILD_MEMORY)
    op.execute(f"DROP INDEX IF EXISTS {INDEX}")
    op.execute(
        f"CREATE INDEX {INDEX} ON propositions USING hnsw ({key} {opclass}) "
        "WITH (m = 16, ef_construction = 64)"
    )


def upgrade() -> None:
    _rebuild("((embedding::halfvec(384)))", "halfvec_cosine_ops")


def downgrade() -> None:
    _rebuild("(embedding)", "vector_cosine_ops")
