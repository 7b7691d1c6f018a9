"""entity degrees: each entity's number of entity–unit edges, stored instead of counted

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24

Retrieval damps an entity's score by its degree, which it used to count from entity_propositions
for every linked entity on every step (most of the statement's time). The write path and the
deletion now keep `entities.degree` beside the edges (store/graph_writes.py, store/deletion.py);
entities stored before this revision get their counts here, in one UPDATE. That UPDATE gives
every entity a new row version, and each version of a row with a name vector is one insertion
into the HNSW index, so the index is dropped for it and built once afterwards.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HNSW_INDEX = "ix_entities_name_embedding_hnsw"

# Entities without an edge keep the default 0, which is their count.
BACKFILL_DEGREES = """
UPDATE entities e SET degree = d.n
FROM (SELECT entity_id, count(*) AS n FROM entity_propositions GROUP BY entity_id) AS d
WHERE e.id = d.entity_id
"""


def upgrade() -> None:
    op.add_column("entities", sa.Column("degree", sa.Integer(), server_default="0", nullable=False))
    op.drop_index(HNSW_INDEX, table_name="entities", postgresql_using="hnsw")
    op.execute(BACKFILL_DEGREES)
    op.create_index(
        HNSW_INDEX,
        "entities",
        ["name_embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"name_embedding": "vector_cosine_ops"},
    )


def downgrade() -> None:
    op.drop_column("entities", "degree")
