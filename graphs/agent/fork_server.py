"""A fork of a run kept by a LangGraph server (`langgraph dev`, a deployment), made over HTTP.

The same fork as `grasp fork` (graphs/agent/fork.py), with the server's primitives: the thread's
history, `threads.update_state` for the fork's writes, and a run from the fork's checkpoint.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk.client import LangGraphClient

from graphs.agent.fork import ForkRefused, fork_metadata, plan_fork, run_settings
from graphs.runtime.branches import Checkpoint, chain_to

#: The most checkpoints read from the thread's history (a GRASP turn has a dozen or two).
HISTORY_LIMIT = 1000


async def server_checkpoints(client: LangGraphClient, thread: str) -> list[Checkpoint]:
    """Every checkpoint of the thread's parent graph on the server, every branch's."""
    history = await client.threads.get_history(thread, limit=HISTORY_LIMIT)
    return [Checkpoint.of_server(dict(item)) for item in history]


async def fork_on_server(
    client: LangGraphClient,
    thread: str,
    at: str,
    changed: dict[str, Any] | None = None,
    question: str | None = None,
    assistant: str = "grasp",
) -> dict[str, Any]:
    """Fork the thread's latest branch at `at` with `changed` settings; the branch's final state.

    The run's own settings are read back from its checkpoints' metadata (the server copies a run's
    context there); `changed` overrides them. ForkRefused says why a fork cannot be made.
    """
    changed = dict(changed or {})
    chain = chain_to(await server_checkpoints(client, thread))
    if not chain:
        raise ForkRefused(f"no checkpoints for thread {thread}")
    plan = plan_fork(chain, at, question)
    corpus, stored = run_settings(chain[-1].metadata)
    checkpoint_id = plan.checkpoint_id
    for values in plan.updates:
        written = await client.threads.update_state(
            thread, values, as_node=plan.as_node, checkpoint_id=checkpoint_id
        )
        checkpoint_id = str(written["checkpoint"]["checkpoint_id"])
    context = {**stored, **changed, **({"corpus": corpus} if corpus else {})}
    result = await client.runs.wait(
        thread,
        assistant,
        input=None,
        checkpoint_id=checkpoint_id,
        context=context,
        metadata=fork_metadata(plan, changed, question),
    )
    return dict(result) if isinstance(result, dict) else {}
