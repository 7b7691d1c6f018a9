"""initial schema: vector extension, three-layer graph, ledgers

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
import pgvector.sqlalchemy
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # pgvector must exist before any vector column; IF NOT EXISTS because a shared server may have it.
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "corpora",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("embedder", sa.String(length=200), nullable=True),
        sa.Column("n_propositions", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("n_proposition_lexemes", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("n_passages", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("n_passage_lexemes", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "llm_cache",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("meta", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "entities",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("canonical_name", sa.Text(), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("type_embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=True),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_entities_corpus_canonical", "entities", ["corpus_id", "canonical_name"], unique=False
    )
    op.create_table(
        "llm_calls",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("corpus_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.String(length=100), nullable=True),
        sa.Column("node", sa.String(length=100), nullable=False),
        sa.Column("agent_id", sa.String(length=100), nullable=True),
        sa.Column("iteration", sa.Integer(), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_llm_calls_corpus", "llm_calls", ["corpus_id"], unique=False)
    op.create_index("ix_llm_calls_run", "llm_calls", ["run_id"], unique=False)
    op.create_table(
        "passages",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="pending", nullable=False),
        sa.Column("embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=True),
        sa.Column(
            "tsv",
            postgresql.TSVECTOR(),
            sa.Computed("to_tsvector('english', title || ' ' || text)", persisted=True),
            nullable=False,
        ),
        sa.Column(
            "n_lexemes",
            sa.Integer(),
            sa.Computed("length(to_tsvector('english', title || ' ' || text))", persisted=True),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("corpus_id", "content_hash", name="uq_passages_corpus_hash"),
    )
    op.create_index("ix_passages_corpus_status", "passages", ["corpus_id", "status"], unique=False)
    op.create_index(
        "ix_passages_embedding_hnsw",
        "passages",
        ["embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index("ix_passages_tsv", "passages", ["tsv"], unique=False, postgresql_using="gin")
    op.create_table(
        "extraction_failures",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.BigInteger(), nullable=False),
        sa.Column("raw_output", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_extraction_failures_passage", "extraction_failures", ["passage_id"], unique=False
    )
    op.create_table(
        "propositions",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("corpus_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.BigInteger(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=False),
        sa.Column(
            "tsv",
            postgresql.TSVECTOR(),
            sa.Computed("to_tsvector('english', text)", persisted=True),
            nullable=False,
        ),
        sa.Column(
            "n_lexemes",
            sa.Integer(),
            sa.Computed("length(to_tsvector('english', text))", persisted=True),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(["corpus_id"], ["corpora.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_propositions_corpus", "propositions", ["corpus_id"], unique=False)
    op.create_index(
        "ix_propositions_embedding_hnsw",
        "propositions",
        ["embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index("ix_propositions_passage", "propositions", ["passage_id"], unique=False)
    op.create_index(
        "ix_propositions_tsv", "propositions", ["tsv"], unique=False, postgresql_using="gin"
    )
    op.create_table(
        "entity_propositions",
        sa.Column("entity_id", sa.BigInteger(), nullable=False),
        sa.Column("proposition_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["entity_id"], ["entities.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["proposition_id"], ["propositions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entity_id", "proposition_id"),
    )
    op.create_index(
        "ix_entity_propositions_proposition",
        "entity_propositions",
        ["proposition_id"],
        unique=False,
    )


def downgrade() -> None:
    # The vector extension stays: other schemas on the same server may use it.
    op.drop_index("ix_entity_propositions_proposition", table_name="entity_propositions")
    op.drop_table("entity_propositions")
    op.drop_index("ix_propositions_tsv", table_name="propositions", postgresql_using="gin")
    op.drop_index("ix_propositions_passage", table_name="propositions")
    op.drop_index(
        "ix_propositions_embedding_hnsw",
        table_name="propositions",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.drop_index("ix_propositions_corpus", table_name="propositions")
    op.drop_table("propositions")
    op.drop_index("ix_extraction_failures_passage", table_name="extraction_failures")
    op.drop_table("extraction_failures")
    op.drop_index("ix_passages_tsv", table_name="passages", postgresql_using="gin")
    op.drop_index(
        "ix_passages_embedding_hnsw",
        table_name="passages",
        postgresql_using="hnsw",
        postgresql_with={"m": 16, "ef_construction": 64},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.drop_index("ix_passages_corpus_status", table_name="passages")
    op.drop_table("passages")
    op.drop_index("ix_llm_calls_run", table_name="llm_calls")
    op.drop_index("ix_llm_calls_corpus", table_name="llm_calls")
    op.drop_table("llm_calls")
    op.drop_index("ix_entities_corpus_canonical", table_name="entities")
    op.drop_table("entities")
    op.drop_table("llm_cache")
    op.drop_table("corpora")
