"""Two users and an admin over HTTP (`langgraph dev` + langgraph_sdk), with tokens from a file.

Alice asks a question on her thread; Bob cannot find, read, change, run on or delete it; neither
may index; unknown context fields, unknown input fields (a server path), over-long questions and
corpora a user was not given are refused in one response; the admin indexes passages sent in
the input. Run with `-s` to see every refused request and its response.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from graphs.runtime.run_requests import MAX_QUESTION_CHARS
from store.engine import make_engine
from tests.conftest import TABLES
from tests.fixtures.dev_server import langgraph_dev, scripted_env
from tests.fixtures.films import PAPER_VOTE, build_corpus, chain_rules
from tests.graph.test_dev_server import QUESTION

TOKENS = {
    "alice": "alice-token-0123456789",
    "bob": "bob-token-0123456789ab",
    "root": "root-token-0123456789a",
}
CONTEXT = {"corpus": "films", **PAPER_VOTE}
REFUSALS: list[tuple[str, int, str]] = []


@pytest.fixture(scope="module")
def server_url(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `langgraph dev` for the module, with three users and the films corpus."""
    from sqlalchemy import text

    folder = tmp_path_factory.mktemp("served")
    engine = make_engine(database_url, pool_size=1)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    rules = [r.model_dump() for r in chain_rules(build_corpus(engine))]
    engine.dispose()
    users = folder / "users.json"
    users.write_text(
        json.dumps(
            {
                TOKENS["alice"]: {"user": "alice", "corpora": ["films"]},
                TOKENS["bob"]: {"user": "bob", "corpora": ["films"]},
                TOKENS["root"]: {"user": "root", "corpora": "*", "admin": True},
            }
        )
    )
    env = {**scripted_env(database_url, rules, folder), "GRASP_AUTH_FILE": str(users)}
    with langgraph_dev(env, folder, unset=("GRASP_AUTH",)) as url:
        yield url


def client(url: str, user: str) -> LangGraphClient:
    return get_client(url=url, headers={"Authorization": f"Bearer {TOKENS[user]}"})


async def refused(what: str, request: Awaitable[Any]) -> tuple[int, str]:
    """The status and detail of a request that must fail; recorded for the transcript."""
    try:
        await request
    except httpx.HTTPStatusError as exc:
        try:
            detail = str(exc.response.json().get("detail", exc.response.text))
        except json.JSONDecodeError:
            detail = exc.response.text
        REFUSALS.append((what, exc.response.status_code, detail))
        return exc.response.status_code, detail
    raise AssertionError(f"{what}: accepted, but it must be refused")


@pytest.fixture(scope="module")
async def alice_thread(server_url: str) -> AsyncIterator[str]:
    """Alice's thread, after one answered question."""
    alice = client(server_url, "alice")
    thread = (await alice.threads.create())["thread_id"]
    result = await alice.runs.wait(thread, "grasp", input={"question": QUESTION}, context=CONTEXT)
    assert isinstance(result, dict) and result["final_answer"] == "Lisbon"
    yield thread


async def test_requests_without_a_valid_token_are_refused(server_url: str) -> None:
    async with httpx.AsyncClient(base_url=server_url) as http:
        none = await http.post("/threads/search", json={})
        wrong = await http.post(
            "/threads/search", json={}, headers={"Authorization": "Bearer not-a-token-at-all"}
        )
    for what, response in (("no token", none), ("an unknown token", wrong)):
        REFUSALS.append((f"threads.search with {what}", response.status_code, response.text))
        assert response.status_code == 401
        assert "Authorization: Bearer TOKEN" in response.json()["detail"]


async def test_another_user_cannot_reach_a_thread(server_url: str, alice_thread: str) -> None:
    alice, bob = client(server_url, "alice"), client(server_url, "bob")
    mine = [t["thread_id"] for t in await alice.threads.search(limit=100)]
    assert alice_thread in mine
    assert alice_thread not in [t["thread_id"] for t in await bob.threads.search(limit=100)]

    assert (await refused("bob reads alice's thread", bob.threads.get(alice_thread)))[0] == 404
    status, _ = await refused("bob reads alice's state", bob.threads.get_state(alice_thread))
    assert status == 404
    status, _ = await refused(
        "bob overwrites alice's state",
        bob.threads.update_state(alice_thread, {"question": "overwritten"}),
    )
    assert status == 404
    status, _ = await refused(
        "bob runs on alice's thread",
        bob.runs.wait(alice_thread, "grasp", input={"question": QUESTION}, context=CONTEXT),
    )
    assert status == 404
    assert (await refused("bob deletes alice's thread", bob.threads.delete(alice_thread)))[0] == 404
    status, detail = await refused(
        "alice hands her thread to bob",
        alice.threads.update(alice_thread, metadata={"owner": "bob"}),
    )
    assert (status, detail) == (403, "a thread's owner cannot be changed")

    values = (await alice.threads.get_state(alice_thread))["values"]  # untouched by all above
    assert isinstance(values, dict)
    assert (values["question"], values["final_answer"]) == (QUESTION, "Lisbon")
    metadata = (await alice.threads.get(alice_thread))["metadata"]
    assert metadata is not None and metadata["owner"] == "alice"


async def test_run_requests_are_checked_before_the_run(server_url: str) -> None:
    bob = client(server_url, "bob")
    thread = (await bob.threads.create())["thread_id"]
    cases: dict[str, tuple[str, dict[str, Any], dict[str, Any] | None, int, str]] = {
        "bob indexes": (
            "index",
            {"corpus": "films", "passages": [], "source": "/srv/films.json"},
            None,
            403,
            "graph 'index' is for admins on this server; user 'bob' is not one",
        ),
        "bob names an unknown context field": (
            "grasp",
            {"question": QUESTION},
            {"corpus": "films", "max_hopz": 3},
            422,
            "graph 'grasp' has no context field 'max_hopz'; its fields: ",
        ),
        "bob sends an over-long question": (
            "grasp",
            {"question": "why? " * (MAX_QUESTION_CHARS // 5 + 1)},
            {"corpus": "films"},
            422,
            f"the question has {5 * (MAX_QUESTION_CHARS // 5 + 1)} characters; "
            f"this server takes at most {MAX_QUESTION_CHARS}",
        ),
        "bob names a corpus he was not given": (
            "dense_rag",
            {"question": QUESTION},
            {"corpus": "hr"},
            403,
            "corpus 'hr' is not open to user 'bob'; its corpora: 'films'",
        ),
        "bob sends an unknown input field": (
            "grasp",
            {"question": QUESTION, "answers": {"1": "x"}},
            {"corpus": "films"},
            422,
            "graph 'grasp' takes no input field 'answers'; its input fields: 'messages', "
            "'question'",
        ),
    }
    for what, (graph, given, context, status, message) in cases.items():
        got = await refused(what, bob.runs.wait(thread, graph, input=given, context=context))
        assert got[0] == status and got[1].startswith(message), (what, got)
    status, detail = await refused(
        "bob creates an assistant", bob.assistants.create("index", config={})
    )
    assert (status, detail) == (403, "assistants are fixed on this server: run a graph by its name")
    assert (await bob.threads.get_state(thread))["values"] == {}  # no run ever started


async def test_only_an_admin_indexes_and_only_passages_it_sends(server_url: str) -> None:
    root, alice = client(server_url, "root"), client(server_url, "alice")
    thread = (await root.threads.create())["thread_id"]
    status, detail = await refused(
        "root names a server file",
        root.runs.wait(thread, "index", input={"corpus": "films", "source_path": "/etc/passwd"}),
    )
    assert (status, detail) == (
        422,
        "source_path is not accepted: the server reads no file a client names; send the "
        "passages themselves in the input",
    )
    passages: list[Any] = [{"title": "Lisbon", "text": "Lisbon lies on the Tagus."}]
    result = await root.runs.wait(
        thread,
        "index",
        input={"corpus": "served", "passages": passages, "source": "notes"},
        context={"extractor": "synthetic"},
    )
    assert isinstance(result, dict)
    assert (result["summary"]["passages"], result["summary"]["passages_done"]) == (1, 1)
    own = (await alice.threads.create())["thread_id"]
    status, _ = await refused(
        "alice empties a corpus through the index graph",
        alice.runs.wait(own, "index", input={"corpus": "films", "passages": [], "source": "x"}),
    )
    assert status == 403


def test_print_the_refusals() -> None:
    """Every refused request of this module and its response (shown with -s)."""
    for what, status, detail in REFUSALS:
        print(f"{status}  {what}: {detail}")
    assert len(REFUSALS) >= 14
