"""SQLAlchemy 2 models of the three-layer graph (passages, units, entities) and its edge tables.

The BM25 postings (`posting_models.py`) and the LLM ledger (`ledger_models.py`) are tables on the
same `Base`; `store/schema.py` gathers them all for migrations.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import HALFVEC, Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    cast,
    column,
    func,
)
from sqlalchemy import text as sql_text
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

#: Width of every stored vector. Embedders are asked for this many dimensions (MiniLM gives 384
#: natively; gemini-embedding-001 is asked for 384 through its Matryoshka output size) because an
#: HNSW index needs one fixed width per column.
EMBEDDING_DIM = 384

#: The units' HNSW graph holds each embedding as halfvec (16-bit floats): half the memory of
#: float4, and a faster walk once the graph outgrows the CPU caches, with the same GRASP, PPR and
#: dense recall on the real sets and PropRAG's seeds as an exact scan's (docs/scale.md). A unit search orders by
#: `UNIT_ANN_DISTANCE` to use it; the cosines it returns still come from the stored float4 vectors.
#: The passages' graph stays float4: as halfvec, the dense baseline's deep search lost two passages
#: of `musique_train`'s top 10 (R@10 0.692 → 0.683).
UNIT_ANN_DISTANCE = f"embedding::halfvec({EMBEDDING_DIM}) <=> CAST(:q AS halfvec({EMBEDDING_DIM}))"
_HALF_EMBEDDING = cast(column("embedding"), HALFVEC(EMBEDDING_DIM)).label("half_embedding")


#: The text-search configuration behind BM25: English stemming and stop words.
TS_CONFIG = "english"


class Base(DeclarativeBase):
    """Declarative base of every table."""


class Corpus(Base):
    """A name space: one indexed collection of passages. Counters feed BM25's N and avgdl."""

    __tablename__ = "corpora"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    embedder: Mapped[str | None] = mapped_column(Text)
    n_propositions: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    n_proposition_lexemes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    n_passages: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    n_passage_lexemes: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    #: Bumped in the same transaction as every change of the entity graph layer, so a cache keyed
    #: by (corpus, graph_version) is never stale.
    graph_version: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class Passage(Base):
    """A source passage; `status` is pending until its propositions are written, then done/failed."""

    __tablename__ = "passages"
    __table_args__ = (
        UniqueConstraint("corpus_id", "content_hash", name="uq_passages_corpus_hash"),
        Index("ix_passages_corpus_status", "corpus_id", "status"),
        # The page term's lookup by title (store/bridge.py, migration 0009).
        Index("ix_passages_corpus_title", "corpus_id", sql_text("lower(title)")),
        Index(
            "ix_passages_embedding_hnsw",
            "embedding",
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 64},
            postgresql_ops={"embedding": "vector_cosine_ops"},
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(ForeignKey("corpora.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    position: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="pending", server_default="pending")
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    tsv: Mapped[Any] = mapped_column(
        TSVECTOR, Computed(f"to_tsvector('{TS_CONFIG}', title || ' ' || text)", persisted=True)
    )
    n_lexemes: Mapped[int] = mapped_column(
        Integer,
        Computed(f"length(to_tsvector('{TS_CONFIG}', title || ' ' || text))", persisted=True),
    )


class Proposition(Base):
    """An atomic statement (or a sentence, for the sentence extractor) of exactly one passage."""

    __tablename__ = "propositions"
    __table_args__ = (
        Index("ix_propositions_corpus", "corpus_id"),
        Index("ix_propositions_passage", "passage_id"),
        Index(
            "ix_propositions_embedding_hnsw",
            _HALF_EMBEDDING,
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 64},
            postgresql_ops={"half_embedding": "halfvec_cosine_ops"},
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(ForeignKey("corpora.id", ondelete="CASCADE"))
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM))
    tsv: Mapped[Any] = mapped_column(
        TSVECTOR, Computed(f"to_tsvector('{TS_CONFIG}', text)", persisted=True)
    )
    n_lexemes: Mapped[int] = mapped_column(
        Integer, Computed(f"length(to_tsvector('{TS_CONFIG}', text))", persisted=True)
    )


class Entity(Base):
    """A typed named entity, de-duplicated by canonical name and type-embedding similarity."""

    __tablename__ = "entities"
    __table_args__ = (
        Index("ix_entities_corpus_canonical", "corpus_id", "canonical_name"),
        Index(
            "ix_entities_name_embedding_hnsw",
            "name_embedding",
            postgresql_using="hnsw",
            postgresql_with={"m": 16, "ef_construction": 64},
            postgresql_ops={"name_embedding": "vector_cosine_ops"},
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(ForeignKey("corpora.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(Text)
    canonical_name: Mapped[str] = mapped_column(Text)
    type: Mapped[str] = mapped_column(Text)
    type_embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    #: The name's embedding, for synonymy edges; NULL until the indexer's linking step embeds it.
    name_embedding: Mapped[Any] = mapped_column(Vector(EMBEDDING_DIM), nullable=True)
    #: Whether the synonym search has run for this entity (the linking step's resume marker).
    synonyms_linked: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=sql_text("false")
    )
    #: How many units link the entity (its entity_propositions rows), which damps its score on
    #: every retrieval step. Kept in the transactions that add and remove the edges (the batch
    #: write, the deletion), so retrieval reads it instead of counting; `grasp corpus check`
    #: compares it with a recount.
    degree: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


# The graph layer's derived edges (entity–unit, co-occurrence, containment) carry no foreign keys:
# a batch write derives them from ids it has just created, under the corpus's entity lock, and
# re-checking every row cost more than the rest of the write's statements (migration 0008). The
# deletion removes them itself before their rows go (store/derived_edges.py), and
# `grasp corpus check` counts any that drift from the units.


class EntityProposition(Base):
    """Edge: the entity occurs in the proposition."""

    __tablename__ = "entity_propositions"
    __table_args__ = (Index("ix_entity_propositions_proposition", "proposition_id"),)

    entity_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    proposition_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)


class EntitySynonym(Base):
    """Edge: two entities of one corpus whose name embeddings are at least the threshold alike."""

    __tablename__ = "entity_synonyms"
    __table_args__ = (
        CheckConstraint("entity_a < entity_b", name="ck_entity_synonyms_ordered"),
        Index("ix_entity_synonyms_entity_b", "entity_b"),
        Index("ix_entity_synonyms_corpus", "corpus_id"),
    )

    corpus_id: Mapped[int] = mapped_column(ForeignKey("corpora.id", ondelete="CASCADE"))
    entity_a: Mapped[int] = mapped_column(
        ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True
    )
    entity_b: Mapped[int] = mapped_column(
        ForeignKey("entities.id", ondelete="CASCADE"), primary_key=True
    )
    similarity: Mapped[float] = mapped_column(Float)


class EntityCooccurrence(Base):
    """Edge: two entities linked to the same retrieval unit, which is the relation's text."""

    __tablename__ = "entity_cooccurrences"
    __table_args__ = (
        CheckConstraint("entity_a < entity_b", name="ck_entity_cooccurrences_ordered"),
        Index("ix_entity_cooccurrences_corpus", "corpus_id"),
        Index("ix_entity_cooccurrences_entity_b", "entity_b"),
        Index("ix_entity_cooccurrences_proposition", "proposition_id"),
    )

    corpus_id: Mapped[int] = mapped_column(Integer)
    entity_a: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    entity_b: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    proposition_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)


class EntityPassage(Base):
    """Containment: the entity occurs in `n_units` of the passage's retrieval units."""

    __tablename__ = "entity_passages"
    __table_args__ = (
        Index("ix_entity_passages_passage", "passage_id"),
        Index("ix_entity_passages_corpus", "corpus_id"),
    )

    corpus_id: Mapped[int] = mapped_column(Integer)
    entity_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    passage_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    n_units: Mapped[int] = mapped_column(Integer)


class PassageSource(Base):
    """A source (file or folder path) that holds the passage; a passage may have several.

    `file`: for a folder source, the passage's file relative to it (what a citation names).
    """

    __tablename__ = "passage_sources"
    __table_args__ = (Index("ix_passage_sources_corpus_source", "corpus_id", "source"),)

    corpus_id: Mapped[int] = mapped_column(ForeignKey("corpora.id", ondelete="CASCADE"))
    passage_id: Mapped[int] = mapped_column(
        ForeignKey("passages.id", ondelete="CASCADE"), primary_key=True
    )
    source: Mapped[str] = mapped_column(Text, primary_key=True)
    file: Mapped[str | None] = mapped_column(Text, nullable=True)


class ExtractionFailure(Base):
    """A passage the extractor could not handle, with the model's raw output and the error."""

    __tablename__ = "extraction_failures"
    __table_args__ = (Index("ix_extraction_failures_passage", "passage_id"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    corpus_id: Mapped[int] = mapped_column(ForeignKey("corpora.id", ondelete="CASCADE"))
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"))
    raw_output: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
