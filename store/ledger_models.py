"""The LLM ledger's tables: one row per call (its tokens) and the response cache."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    false,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from store.models import Base


class LlmCall(Base):
    """Ledger row: one LLM call (or cache hit) with its token usage."""

    __tablename__ = "llm_calls"
    __table_args__ = (
        Index("ix_llm_calls_corpus", "corpus_id"),
        Index("ix_llm_calls_run", "run_id"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    corpus_id: Mapped[int | None] = mapped_column(ForeignKey("corpora.id", ondelete="SET NULL"))
    run_id: Mapped[str | None] = mapped_column(Text)
    node: Mapped[str] = mapped_column(Text)
    agent_id: Mapped[str | None] = mapped_column(Text)
    iteration: Mapped[int | None] = mapped_column(Integer)
    model: Mapped[str] = mapped_column(Text)
    input_tokens: Mapped[int] = mapped_column(Integer)
    output_tokens: Mapped[int] = mapped_column(Integer)
    latency_s: Mapped[float] = mapped_column(Float)
    cached: Mapped[bool] = mapped_column(Boolean)
    #: A failed attempt (provider error or unusable reply): billed, so counted, but not an answer.
    failed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())


class LlmCacheEntry(Base):
    """A cached model response keyed by sha256(model + messages + parameters)."""

    __tablename__ = "llm_cache"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    model: Mapped[str] = mapped_column(Text)
    response: Mapped[str] = mapped_column(Text)
    input_tokens: Mapped[int] = mapped_column(Integer)
    output_tokens: Mapped[int] = mapped_column(Integer)
    meta: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
