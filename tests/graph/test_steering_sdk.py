"""Plan review, `tokens` events and a fork over HTTP: `langgraph dev` driven through langgraph_sdk
(one server for the whole test)."""

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from sqlalchemy import Engine, select

from graphs.agent.fork import run_settings
from graphs.agent.fork_server import fork_on_server, server_checkpoints
from graphs.runtime.branches import branches_of, chain_to
from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.dev_server import dev_server
from tests.fixtures.films import PAPER_VOTE, build_corpus
from tests.fixtures.steering import GUIDANCE, NEW_PLAN, QUESTION, REWORDED, steering_rules

CONTEXT = {"corpus": "films", "review_plan": True, **PAPER_VOTE}


@pytest.fixture
async def sdk(engine: Engine, database_url: str, tmp_path: Path) -> AsyncIterator[LangGraphClient]:
    rules = steering_rules(build_corpus(engine))
    async with dev_server(rules, database_url, tmp_path) as url:
        yield get_client(url=url)


def pending(state: dict[str, Any]) -> Any:
    """The value of the interrupt a paused thread waits on."""
    interrupts = state.get("interrupts") or [i for t in state["tasks"] for i in t["interrupts"]]
    assert len(interrupts) == 1, state
    return interrupts[0]["value"]


def calls(engine: Engine, thread: str) -> list[tuple[str, str | None]]:
    with transaction(engine) as session:
        rows = session.execute(
            select(LlmCall.node, LlmCall.agent_id)
            .where(LlmCall.run_id == thread)
            .order_by(LlmCall.id)
        ).all()
    return [(node, agent) for node, agent in rows]


async def test_review_and_fork_over_http(sdk: LangGraphClient, engine: Engine) -> None:
    thread = (await sdk.threads.create())["thread_id"]
    await sdk.runs.wait(thread, "grasp", input={"question": QUESTION}, context=CONTEXT)
    state = await sdk.threads.get_state(thread)
    assert state["next"] == ["review_plan"]
    [request] = pending(dict(state))
    assert request["action_request"] == {
        "action": "review_plan",
        "args": {
            "plan": "Find who directed Blue Harbor, then where that person was born.",
            "sub_questions": ["Who directed Blue Harbor?", "Where was #1 born?"],
        },
    }
    assert request["config"] == {
        "allow_accept": True,
        "allow_edit": True,
        "allow_respond": True,
        "allow_ignore": False,
    }

    # A broken edit: refused, still paused, the reason on top of the next review.
    broken = {"type": "edit", "args": {"sub_questions": ["Who directed #2?", "Where was #1 born?"]}}
    await sdk.runs.wait(thread, "grasp", command={"resume": broken}, context=CONTEXT)
    state = await sdk.threads.get_state(thread)
    [request] = pending(dict(state))
    assert request["description"].splitlines()[1] == (
        "Not used: the edit is refused: sub-questions depend on each other in a cycle: #1 → #2 → #1"
    )

    # A response: planned again with the words, and reviewed again.
    answer = {"type": "response", "args": GUIDANCE}
    await sdk.runs.wait(thread, "grasp", command={"resume": answer}, context=CONTEXT)
    [request] = pending(dict(await sdk.threads.get_state(thread)))
    assert request["action_request"]["args"] == {
        "plan": NEW_PLAN,
        "sub_questions": ["Who directed Blue Harbor?", REWORDED],
    }

    # Accepted, streamed: the `tokens` events' running total ends at the state's tally.
    totals = []
    async for part in sdk.runs.stream(
        thread,
        "grasp",
        command={"resume": {"type": "accept"}},
        context=CONTEXT,
        stream_mode=["custom"],
        stream_subgraphs=True,
    ):
        if part.event.startswith("custom") and part.data.get("event") == "tokens":
            totals.append(part.data["total"])
    values = cast(dict[str, Any], (await sdk.threads.get_state(thread))["values"])
    assert values["final_answer"].startswith("the city of Lisbon")
    assert [r["action"] for r in values["plan_review"]] == ["refused", "response", "accept"]
    tally = values["tokens"]
    assert totals[-1] == {k: tally[k] for k in ("input_tokens", "output_tokens", "calls")}
    assert len(totals) == tally["calls"] - 2  # the two plans' events went out before the pauses
    made = len(calls(engine, thread))

    # The run's context is read back from its checkpoints for a fork.
    chain = chain_to(await server_checkpoints(sdk, thread))
    corpus, settings = run_settings(chain[-1].metadata)
    assert (corpus, settings["review_plan"], settings["hit_weight"]) == ("films", True, 0.0)

    # Hop 2 forked with its first wording and another k_passages: nothing before it is asked.
    result = await fork_on_server(
        sdk, thread, "sq2", {"k_passages": 3}, question="Where was #1 born?"
    )
    assert result["final_answer"] == "Lisbon"
    assert calls(engine, thread)[made:] == [
        ("rewrite", "sq2"),
        ("select_entities", "sq2"),
        ("evaluate", "sq2"),
        ("select_entities", "sq2"),
        ("evaluate", "sq2"),
        ("synthesize", None),
    ]
    original, fork = branches_of(await server_checkpoints(sdk, thread))
    assert (original.answer.startswith("the city of Lisbon"), fork.answer) == (True, "Lisbon")
    assert fork.current and fork.changed == ["k_passages=3", "asked: Where was #1 born?"]
    assert fork.spent == {"input_tokens": 1000, "output_tokens": 93, "calls": 6}
    print(json.dumps({"original": original.tokens, "fork": fork.tokens}))  # shown with -s
