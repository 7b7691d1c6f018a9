"""entity graph layer: name embeddings, synonymy, co-occurrence, containment, graph_version

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-28

Corpora indexed before this revision get their co-occurrence and containment rows from the
backfill below; their name embeddings and synonymy edges come from the indexer's linking step on
the next `grasp index` (it needs the embedder, which a migration does not have).
"""

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HNSW = {
    "postgresql_using": "hnsw",
    "postgresql_with": {"m": 16, "ef_construction": 64},
    "postgresql_ops": {"name_embedding": "vector_cosine_ops"},
}

# Frozen copies of the write path's statements (store/graph_writes.py), over every stored unit.
BACKFILL_COOCCURRENCES = """
INSERT INTO entity_cooccurrences (corpus_id, entity_a, entity_b, proposition_id)
SELECT p.corpus_id, a.entity_id, b.entity_id, p.id
FROM propositions p
JOIN entity_propositions a ON a.proposition_id = p.id
JOIN entity_propositions b ON b.proposition_id = p.id AND a.entity_id < b.entity_id
ON CONFLICT DO NOTHING
"""
BACKFILL_CONTAINMENT = """
INSERT INTO entity_passages (corpus_id, entity_id, passage_id, n_units)
SELECT p.corpus_id, ep.entity_id, p.passage_id, count(*)
FROM propositions p
JOIN entity_propositions ep ON ep.proposition_id = p.id
GROUP BY p.corpus_id, ep.entity_id, p.passage_id
ON CONFLICT DO NOTHING
"""


def upgrade() -> None:
    op.add_column(
        "corpora", sa.Column("graph_version", sa.BigInteger(), server_default="0", nullable=False)
    )
    op.add_column(
        "entities",
        sa.Column("name_embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=True),
    )
    op.add_column(
        "entities",
        sa.Column("synonyms_linked", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )
    op.create_index(
        "ix_entities_name_embedding_hnsw", "entities", ["name_embedding"], unique=False, **HNSW
    )
    op.create_table(
        "entity_synonyms",
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("entity_a", sa.BigInteger(), nullable=False),
        sa.Column("entity_b", sa.BigInteger(), nullable=False),
        sa.Column("similarity", sa.Float(), nullable=False),
        sa.CheckConstraint("entity_a < entity_b", name="ck_entity_synonyms_ordered"),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["entity_a"], ["entities.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["entity_b"], ["entities.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entity_a", "entity_b"),
    )
    op.create_index("ix_entity_synonyms_entity_b", "entity_synonyms", ["entity_b"], unique=False)
    op.create_index("ix_entity_synonyms_corpus", "entity_synonyms", ["corpus_id"], unique=False)
    op.create_table(
        "entity_cooccurrences",
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("entity_a", sa.BigInteger(), nullable=False),
        sa.Column("entity_b", sa.BigInteger(), nullable=False),
        sa.Column("proposition_id", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("entity_a < entity_b", name="ck_entity_cooccurrences_ordered"),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["entity_a"], ["entities.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["entity_b"], ["entities.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["proposition_id"], ["propositions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entity_a", "entity_b", "proposition_id"),
    )
    op.create_index(
        "ix_entity_cooccurrences_corpus", "entity_cooccurrences", ["corpus_id"], unique=False
    )
    op.create_index(
        "ix_entity_cooccurrences_entity_b", "entity_cooccurrences", ["entity_b"], unique=False
    )
    op.create_index(
        "ix_entity_cooccurrences_proposition",
        "entity_cooccurrences",
        ["proposition_id"],
        unique=False,
    )
    op.create_table(
        "entity_passages",
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("entity_id", sa.BigInteger(), nullable=False),
        sa.Column("passage_id", sa.BigInteger(), nullable=False),
        sa.Column("n_units", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["entity_id"], ["entities.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entity_id", "passage_id"),
    )
    op.create_index("ix_entity_passages_passage", "entity_passages", ["passage_id"], unique=False)
    op.create_index("ix_entity_passages_corpus", "entity_passages", ["corpus_id"], unique=False)
    op.execute(BACKFILL_COOCCURRENCES)
    op.execute(BACKFILL_CONTAINMENT)


def downgrade() -> None:
    op.drop_index("ix_entity_passages_corpus", table_name="entity_passages")
    op.drop_index("ix_entity_passages_passage", table_name="entity_passages")
    op.drop_table("entity_passages")
    op.drop_index("ix_entity_cooccurrences_proposition", table_name="entity_cooccurrences")
    op.drop_index("ix_entity_cooccurrences_entity_b", table_name="entity_cooccurrences")
    op.drop_index("ix_entity_cooccurrences_corpus", table_name="entity_cooccurrences")
    op.drop_table("entity_cooccurrences")
    op.drop_index("ix_entity_synonyms_corpus", table_name="entity_synonyms")
    op.drop_index("ix_entity_synonyms_entity_b", table_name="entity_synonyms")
    op.drop_table("entity_synonyms")
    op.drop_index("ix_entities_name_embedding_hnsw", table_name="entities", **HNSW)
    op.drop_column("entities", "synonyms_linked")
    op.drop_column("entities", "name_embedding")
    op.drop_column("corpora", "graph_version")
