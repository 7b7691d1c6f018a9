"""`grasp eval` over films for a peer method, and what its run left: lines, ledger, checkpoints."""

import json
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, func, select

from graphs.peers.registry import build_method_graph
from graphs.runtime.checkpoints import open_checkpointer
from graphs.runtime.services import Services
from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.eval_films import args


def peer_eval(questions: Path, out: Path, *extra: str) -> Any:
    """`grasp eval` over films without judge or closed-book samples (no GRASP flags)."""
    argv = ["eval", str(questions), "--corpus", "films", "--no-judge", "--p-samples", "0"]
    return args(*argv, "--out", str(out), *extra)


def lines_of(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (json.loads(x) for x in path.read_text().splitlines())}


def ledger_tally(engine: Engine, thread: str) -> tuple[int, int, int]:
    """(input, output, calls) of a run's successful calls in the llm_calls ledger."""
    statement = select(
        func.coalesce(func.sum(LlmCall.input_tokens), 0),
        func.coalesce(func.sum(LlmCall.output_tokens), 0),
        func.count(),
    ).where(LlmCall.run_id == thread, LlmCall.failed.is_(False))
    with transaction(engine) as session:
        tokens_in, tokens_out, calls = session.execute(statement).one()
    return int(tokens_in), int(tokens_out), int(calls)


async def thread_values(svc: Services, database_url: str, method: str, thread: str) -> Any:
    async with open_checkpointer(database_url) as saver:
        graph = build_method_graph(method, svc, saver)
        return await graph.aget_state({"configurable": {"thread_id": thread}})
