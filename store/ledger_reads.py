"""Read-only queries over the LLM-call ledger for one run (the run viewer's token chart)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, text

# Every call a run made, oldest first (ids grow with insertion); a resumed run keeps its thread id.
RUN_CALLS = text(
    """
    SELECT node, agent_id, iteration, model, input_tokens, output_tokens, latency_s, cached,
           failed, created_at
    FROM llm_calls
    WHERE run_id = :run_id
    ORDER BY id
    """
)


@dataclass(frozen=True)
class LedgerCall:
    """One ledger row of a run."""

    node: str
    agent: str | None
    iteration: int | None
    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cached: bool
    failed: bool
    created_at: str


def run_calls(engine: Engine, run_id: str) -> list[LedgerCall]:
    """The ledger rows of one run (its LangGraph thread id), in the order they were written."""
    with engine.connect() as conn:
        rows = conn.execute(RUN_CALLS, {"run_id": run_id}).all()
    return [
        LedgerCall(
            node=row.node,
            agent=row.agent_id,
            iteration=row.iteration,
            model=row.model,
            input_tokens=int(row.input_tokens),
            output_tokens=int(row.output_tokens),
            latency_s=float(row.latency_s),
            cached=bool(row.cached),
            failed=bool(row.failed),
            created_at=row.created_at.isoformat() if row.created_at else "",
        )
        for row in rows
    ]
