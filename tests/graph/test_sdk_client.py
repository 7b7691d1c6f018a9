"""The server path as a chat product uses it: `langgraph dev` driven through `langgraph_sdk`.

One conversation thread: the first turn is streamed (progress events and answer tokens arrive
while the run is still running), the follow-up is cancelled midway and resumed, and its answer
uses the first turn's. Run with `-s` to see the timed transcript of events.
"""

import ast
import io
import json
import re
import time
from collections.abc import AsyncIterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient
from sqlalchemy import Engine, select

from store.engine import transaction
from store.ledger_models import LlmCall
from tests.fixtures.dev_server import langgraph_dev, scripted_env
from tests.fixtures.films import PAPER_VOTE, REWRITE, SYNTHESIZE, build_corpus
from tests.graph.conversation_script import FIRST, FOLLOW_UP, conversation_rules
from tests.graph.test_dev_server import REPO

CONTEXT = {"corpus": "films", **PAPER_VOTE}
MODES = ["updates", "messages-tuple", "custom"]


def server_rules(engine: Engine) -> list[dict[str, Any]]:
    """The conversation's script, with the answer streamed slowly and the follow-up's first
    search held back (once) long enough to cancel it."""
    rules = conversation_rules(build_corpus(engine))
    for rule in rules:
        if rule.when[0] == re.escape(SYNTHESIZE):
            rule.chunk_delay_s = 0.05
    opening = [re.escape(REWRITE), re.escape("Sub-question: Where was Tomas Reyd born?")]
    follow_up_rewrite = next(r for r in rules if r.when == opening)
    held = follow_up_rewrite.model_copy(update={"delay_s": 2.0, "times": 1})
    return [r.model_dump() for r in [held, *rules]]


@pytest.fixture
async def sdk(engine: Engine, database_url: str, tmp_path: Path) -> AsyncIterator[LangGraphClient]:
    """`langgraph dev` on 127.0.0.1 with the scripted conversation, and an SDK client to it."""
    env = scripted_env(database_url, server_rules(engine), tmp_path)
    env["GRASP_AUTH"] = "off"  # one local user; tests/graph/test_served_users.py covers tokens
    env["GRASP_ALLOWED_CORPORA"] = "films"
    with langgraph_dev(env, tmp_path) as url:
        yield get_client(url=url)


class Transcript:
    """Events with the seconds since the test's first request, printed at the end."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.rows: list[tuple[float, str, str]] = []

    def add(self, kind: str, text: str) -> None:
        self.rows.append((time.monotonic() - self.start, kind, text))

    def print(self) -> None:
        for at, kind, text in self.rows:
            print(f"{at:7.3f}s  {kind:<14} {text}")


def describe(event: str, data: Any) -> tuple[str, str]:
    """A transcript row for one SSE event of the stream."""
    name = event.split("|")[0]
    if name == "messages":
        chunk, metadata = data
        # Token chunks of the model's calls, or a whole message a node wrote (the answer).
        kind = "token" if chunk.get("type") == "AIMessageChunk" else "message"
        return f"{kind}:{metadata.get('langgraph_node')}", json.dumps(chunk.get("content", ""))
    if name == "custom":
        return "custom", json.dumps(data)
    if name == "updates":
        return "updates", ", ".join(data)
    return name, json.dumps(data)[:80]


async def test_a_conversation_through_the_sdk(sdk: LangGraphClient, engine: Engine) -> None:
    log = Transcript()
    thread = (await sdk.threads.create())["thread_id"]

    # Turn 1, streamed. When the first answer token arrives, the run is asked for its status.
    run_id, status_at_first_token = "", ""
    async for part in sdk.runs.stream(
        thread,
        "grasp",
        input={"question": FIRST},
        context=CONTEXT,
        stream_mode=MODES,
        stream_subgraphs=True,
    ):
        kind, text = describe(part.event, part.data)
        if part.event == "metadata":
            run_id = part.data["run_id"]
        if kind == "token:synthesize" and not status_at_first_token:
            status_at_first_token = (await sdk.runs.get(thread, run_id))["status"]
            log.add("run status", status_at_first_token)
        log.add(kind, text)
    log.add("stream ended", "")
    kinds = [kind for _, kind, _ in log.rows]
    events = [json.loads(text) for _, kind, text in log.rows if kind == "custom"]
    # The `tokens` events (after every LLM call) are tests/graph/test_steering_sdk.py's.
    events = [e for e in events if e["event"] != "tokens"]
    assert [e["event"] for e in events if e["event"] != "answer_delta"] == [
        "planning",
        "plan",
        "hop_started",
        "searching",
        "reading",
        "hop_done",
        "synthesizing",
        "answer",
    ]
    answer = "".join(json.loads(t) for _, k, t in log.rows if k == "token:synthesize")
    assert json.loads(answer)["answer"] == "Tomas Reyd"
    # The answer's words alone, in pieces, on the custom stream before the "answer" event.
    deltas = [e["text"] for e in events if e["event"] == "answer_delta"]
    assert "".join(deltas) == "Tomas Reyd" and len(deltas) > 1
    assert [e["event"] for e in events][-len(deltas) - 1 :] == ["answer_delta"] * len(deltas) + [
        "answer"
    ]
    assert kinds.count("token:synthesize") > 3
    assert status_at_first_token == "running"
    first_token = kinds.index("token:synthesize")
    last_update = max(i for i, k in enumerate(kinds) if k == "updates")
    assert first_token < last_update and log.rows[last_update][2] == "synthesize"
    assert kinds.index("custom") < first_token

    # Turn 2 is cancelled while its sub-agent searches (its first search is held back).
    run_id = ""
    async for part in sdk.runs.stream(
        thread,
        "grasp",
        input={"question": FOLLOW_UP},
        context=CONTEXT,
        stream_mode=MODES,
        durability="sync",  # every step saved before the next: a cancel keeps all done so far
    ):
        kind, text = describe(part.event, part.data)
        if part.event == "metadata":
            run_id = part.data["run_id"]
        log.add(kind, text)
        if kind == "custom" and json.loads(text)["event"] == "hop_started":
            await sdk.runs.cancel(thread, run_id, wait=True)
            log.add("cancelled", run_id)
            break
    stopped = await sdk.threads.get_state(thread)
    log.add("state", f"next={stopped['next']} tasks={[t['name'] for t in stopped['tasks']]}")
    # Stopped inside turn 2: it has started but not finished. (`next` may be empty when the cancel
    # lands between a step's end and its checkpoint: that step's writes are kept as pending.)
    assert stopped["tasks"] and stopped["values"]["question"] == FOLLOW_UP
    assert [t["question"] for t in stopped["values"]["turns"]] == [FIRST]
    assert (await sdk.runs.get(thread, run_id))["status"] == "interrupted"

    # Resumed with no input: the turn goes on from its checkpoint and uses turn 1's answer.
    result = await sdk.runs.wait(thread, "grasp", input=None, context=CONTEXT)
    log.add("resumed run", f"final_answer={result['final_answer']}")
    assert result["final_answer"] == "Lisbon"
    assert [t["question"] for t in result["turns"]] == [FIRST, FOLLOW_UP]
    assert result["sub_questions"][0]["text"] == "Where was Tomas Reyd born?"
    with transaction(engine) as session:
        plans = session.scalars(
            select(LlmCall.id).where(LlmCall.run_id == thread, LlmCall.node == "plan")
        ).all()
    assert len(plans) == 2  # one plan per turn: the resume did not plan the follow-up again

    # Another client names a corpus the deployment does not open: refused, in one line.
    other = (await sdk.threads.create())["thread_id"]
    refused = await sdk.runs.wait(
        other, "grasp", input={"question": FIRST}, context={"corpus": "hr"}, raise_error=False
    )
    log.add("refused run", json.dumps(refused))
    assert refused["__error__"] == {
        "error": "CorpusNotAllowed",
        "message": "corpus 'hr' is not open on this deployment (GRASP_ALLOWED_CORPORA); "
        "name a corpus you were given",
    }

    # The README's client code, run as printed there (only the URL and the context replaced).
    printed = await run_readme_client(sdk, CONTEXT)
    log.add("README client", json.dumps(printed[-60:]))
    assert "'event': 'hop_started'" in printed
    answers = [line for line in printed.splitlines() if not line.startswith("{")]
    assert "Tomas Reyd" in answers[0] and "Lisbon" in answers[-1]

    log.print()  # shown with -s


def readme_client_code() -> str:
    """The README's `langgraph_sdk` example (the block that calls `get_client`)."""
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    return next(block for block in blocks if "get_client(" in block)


async def run_readme_client(sdk: LangGraphClient, context: dict[str, Any]) -> str:
    """Run the README's client code against the test server; what it printed."""
    source = readme_client_code()
    url = re.search(r'get_client\(url="([^"]+)"\)', source)
    assert url is not None and 'context={"corpus": "films"}' in source
    source = source.replace(url.group(1), str(sdk.http.client.base_url)).replace(
        'context={"corpus": "films"}', f"context={context!r}"
    )
    code = compile(source, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    out = io.StringIO()
    with redirect_stdout(out):
        await eval(code, {})  # noqa: S307 - the README's own example, run as a user would
    return out.getvalue()
