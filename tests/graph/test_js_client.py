"""A client no one here wrote: the official LangGraph JS SDK holds a two-turn chat with `langgraph dev`.

tests/js/chat.mjs (its SDK pinned by tests/js/package-lock.json, installed by `npm ci` in
.ci/run and scripts/install.sh) sends each question as a chat message, streams messages-tuple
and custom, and reports what arrived; this test checks the answers, their citations, and that
turn 2's "he" was resolved from turn 1.
"""

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.fixtures.dev_server import REPO, dev_server
from tests.fixtures.films import PAPER_VOTE, build_corpus
from tests.graph.test_conversation import FIRST, FOLLOW_UP, conversation_rules

JS = REPO / "tests" / "js"
NODE = shutil.which("node")
CONTEXT = {"corpus": "films", **PAPER_VOTE}


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


def test_a_two_turn_chat_from_the_official_js_sdk(
    engine: Engine, database_url: str, tmp_path: Path
) -> None:
    if NODE is None:
        pytest.skip("node is not installed (Node 20 runs the JS SDK client)")
    if not (JS / "node_modules" / "@langchain" / "langgraph-sdk").is_dir():
        pytest.skip("the JS SDK is not installed: run `npm ci` in tests/js (.ci/run does)")
    rules = [r.model_dump() for r in conversation_rules(build_corpus(engine))]

    with dev_server(database_url, rules, tmp_path, GRASP_ALLOWED_CORPORA="films") as url:
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

    # The thread is its messages.
    assert report["messages"] == [
        {"type": "human", "text": FIRST},
        {"type": "ai", "text": "Tomas Reyd"},
        {"type": "human", "text": FOLLOW_UP},
        {"type": "ai", "text": "Lisbon"},
    ]
