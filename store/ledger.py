"""The LLM response cache and the token ledger: one row per model call, cached or not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, func, select
from sqlalchemy.dialects.postgresql import insert

from store.engine import transaction
from store.ledger_models import LlmCacheEntry, LlmCall


@dataclass(frozen=True)
class CachedResponse:
    """A response served from the cache, with the token counts of the call that produced it."""

    text: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class CallRecord:
    """What the ledger keeps about one call."""

    node: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cached: bool
    corpus_id: int | None = None
    run_id: str | None = None
    agent_id: str | None = None
    iteration: int | None = None
    #: A failed attempt: a retried provider error or a reply that could not be used.
    failed: bool = False


def cache_get(engine: Engine, key: str) -> CachedResponse | None:
    """Return the cached response for `key`, if any."""
    with transaction(engine) as session:
        row = session.get(LlmCacheEntry, key)
        if row is None:
            return None
        return CachedResponse(row.response, row.input_tokens, row.output_tokens)


def cache_put(
    engine: Engine,
    key: str,
    model: str,
    response: CachedResponse,
    meta: dict[str, Any] | None = None,
) -> None:
    """Store a response; a concurrent writer of the same key wins silently."""
    statement = (
        insert(LlmCacheEntry)
        .values(
            key=key,
            model=model,
            response=response.text,
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
            meta=meta,
        )
        .on_conflict_do_nothing(index_elements=["key"])
    )
    with transaction(engine) as session:
        session.execute(statement)


def record_call(engine: Engine, call: CallRecord) -> None:
    """Append one call to the ledger."""
    with transaction(engine) as session:
        session.add(LlmCall(**call.__dict__))


def run_failed_calls(engine: Engine, run_id: str) -> tuple[int, int, int]:
    """A run's failed attempts: how many, and the input and output tokens they cost."""
    statement = select(
        func.count(),
        func.coalesce(func.sum(LlmCall.input_tokens), 0),
        func.coalesce(func.sum(LlmCall.output_tokens), 0),
    ).where(LlmCall.run_id == run_id, LlmCall.failed)
    with transaction(engine) as session:
        calls, tokens_in, tokens_out = session.execute(statement).one()
    return int(calls), int(tokens_in), int(tokens_out)


def run_call_keys(
    engine: Engine, run_id: str, *, failed: bool
) -> list[tuple[str, str | None, int | None]]:
    """(node, sub-agent, iteration) of each successful (or each failed) call of a run."""
    statement = select(LlmCall.node, LlmCall.agent_id, LlmCall.iteration).where(
        LlmCall.run_id == run_id, LlmCall.failed.is_(failed)
    )
    with transaction(engine) as session:
        return [(node, agent, iteration) for node, agent, iteration in session.execute(statement)]


@dataclass(frozen=True)
class TokenTotals:
    """Token sums over ledger rows."""

    calls: int
    cached_calls: int
    input_tokens: int
    output_tokens: int
    #: Failed attempts besides `calls` (their tokens are in the sums: the provider billed them).
    failed_calls: int = 0


def corpus_token_totals(engine: Engine, corpus_id: int) -> TokenTotals:
    """Sum the indexing calls of one corpus (cached calls keep their original counts).

    `calls` counts the answers used; failed attempts are counted apart, their tokens in the sums.
    """
    statement = select(
        func.count().filter(LlmCall.failed.is_(False)),
        func.count().filter(LlmCall.cached),
        func.count().filter(LlmCall.failed),
        func.coalesce(func.sum(LlmCall.input_tokens), 0),
        func.coalesce(func.sum(LlmCall.output_tokens), 0),
    ).where(LlmCall.corpus_id == corpus_id, LlmCall.run_id.is_(None))
    with transaction(engine) as session:
        calls, cached, failed, tokens_in, tokens_out = session.execute(statement).one()
    return TokenTotals(int(calls), int(cached), int(tokens_in), int(tokens_out), int(failed))
