"""A client no one here wrote: the official LangGraph JS SDK holds a two-turn chat with `langgraph dev`.

tests/js/chat.mjs (its SDK pinned by tests/js/package-lock.json, installed by `npm ci` in
.ci/run and scripts/install.sh) sends each question as a chat message, streams messages-tuple
and custom, and reports what arrived; this test checks the answers, their citations, and that
turn 2's "he" was resolved from turn 1.
"""

import json
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.fixtures.dev_server import dev_server
from tests.fixtures.films import PAPER_VOTE, build_corpus
from tests.graph.conversation_script import FIRST, FOLLOW_UP, conversation_rules

REPO = Path(__file__).resolve().parents[2]
JS = REPO / "tests" / "js"
NODE = shutil.which("node")
CONTEXT = {"corpus": "films", **PAPER_VOTE}


def run_docs_example(node: str, url: str) -> str:
    """docs/chat.md's JS SDK example, run against the test server (URL and context replaced)."""
    docs = (REPO / "docs" / "chat.md").read_text(encoding="utf-8")
    (source,) = [b for b in re.findall(r"```js\n(.*?)```", docs, re.DOTALL) if "Client(" in b]
    assert '"http://127.0.0.1:2024"' in source and 'context: { corpus: "films" }' in source
    source = source.replace('"http://127.0.0.1:2024"', json.dumps(url))
    source = source.replace('context: { corpus: "films" }', f"context: {json.dumps(CONTEXT)}")
    # Beside the SDK it imports (an ES module finds packages from where it lies).
    script = JS / f"docs-example-{uuid.uuid4().hex[:8]}.mjs"
    script.write_text(source, encoding="utf-8")
    try:
        done = subprocess.run(
            [node, script.name], cwd=JS, capture_output=True, text=True, timeout=60, check=False
        )
    finally:
        script.unlink()
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def cited(annotation: dict[str, object]) -> tuple[object, ...]:
    extras = annotation["extras"]
    assert isinstance(extras, dict)
    return (
        annotation["type"],
        annotation["title"],
        annotation["cited_text"],
        extras["hop"],
        extras["verified"],
    )


async def test_a_two_turn_chat_from_the_official_js_sdk(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    if NODE is None:
        pytest.skip("node is not installed (Node 20 runs the JS SDK client)")
    if not (JS / "node_modules" / "@langchain" / "langgraph-sdk").is_dir():
        pytest.skip("the JS SDK is not installed: run `npm ci` in tests/js (.ci/run does)")
    rules = conversation_rules(build_corpus(engine))

    async with dev_server(rules, database_url, tmp_path) as url:
        started = time.monotonic()
        done = subprocess.run(
            [NODE, "chat.mjs", url, json.dumps(CONTEXT), FIRST, FOLLOW_UP],
            cwd=JS,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        print(f"the JS client's two turns took {time.monotonic() - started:.1f} s")  # -s shows it
        printed = run_docs_example(NODE, url)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    first, second = report["turns"]

    # Each turn ends in one whole AI message from the synthesize step: the answer, with sources.
    assert (first["reply_count"], first["reply_node"], first["reply_text"]) == (
        1,
        "synthesize",
        "Tomas Reyd",
    )
    assert [cited(a) for a in first["reply_annotations"]] == [
        ("citation", "Blue Harbor", "Blue Harbor was directed by Tomas Reyd.", 1, True)
    ]
    assert (
        first["answer_event"]["citations"][0]["text"] == "Blue Harbor was directed by Tomas Reyd."
    )
    assert first["deltas"] == "Tomas Reyd" and first["token_chunks"] > 0

    # Turn 2's "he" became Tomas Reyd: the planner saw turn 1's question and answer.
    assert second["sub_questions"] == ["Where was Tomas Reyd born?"]
    assert (second["reply_count"], second["reply_text"]) == (1, "Lisbon")
    assert [cited(a) for a in second["reply_annotations"]] == [
        ("citation", "Tomas Reyd", "Tomas Reyd was born in Lisbon in 1950.", 1, True)
    ]
    end = len("Lisbon")
    assert [(a["start_index"], a["end_index"]) for a in second["reply_annotations"]] == [(0, end)]

    # docs/chat.md's JS example, run as printed there: each answer with its numbered sources.
    assert printed.splitlines() == [
        "Tomas Reyd [ '[1] Blue Harbor' ]",
        "Lisbon [ '[1] Tomas Reyd' ]",
    ]

    # The thread is its messages.
    assert report["messages"] == [
        {"type": "human", "text": FIRST},
        {"type": "ai", "text": "Tomas Reyd"},
        {"type": "human", "text": FOLLOW_UP},
        {"type": "ai", "text": "Lisbon"},
    ]
