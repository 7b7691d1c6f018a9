"""derived edges without foreign keys: the graph layer's edge rows are removed explicitly

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25

The entity–unit edges, the co-occurrence rows and the containment rows are derived from the
units in the transaction that writes them, under the corpus's entity lock, from ids that
transaction has just created or read. Their foreign keys re-checked every row anyway: one
trigger and one row lock per key and row, ≈ 21 µs per entity–unit edge (116,535 edges: 2.9 s
with their two keys, 0.4 s without), nine keys in all, the largest share of a batch write's
database time. The deletion code now removes these rows itself, set-wise, before the units,
passages or corpus they hang on (store/derived_edges.py), and `grasp corpus check` counts any
that drift from the units. Units, passages, entities and synonymy edges keep their keys.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: (table, column, referenced table) of each key dropped.
KEYS = (
    ("entity_propositions", "entity_id", "entities"),
    ("entity_propositions", "proposition_id", "propositions"),
    ("entity_cooccurrences", "corpus_id", "corpora"),
    ("entity_cooccurrences", "entity_a", "entities"),
    ("entity_cooccurrences", "entity_b", "entities"),
    ("entity_cooccurrences", "proposition_id", "propositions"),
    ("entity_passages", "corpus_id", "corpora"),
    ("entity_passages", "entity_id", "entities"),
    ("entity_passages", "passage_id", "passages"),
)


def upgrade() -> None:
    for table, column, _ in KEYS:
        op.drop_constraint(f"{table}_{column}_fkey", table, type_="foreignkey")


def downgrade() -> None:
    for table, column, referenced in KEYS:
        op.create_foreign_key(
            f"{table}_{column}_fkey", table, referenced, [column], ["id"], ondelete="CASCADE"
        )
