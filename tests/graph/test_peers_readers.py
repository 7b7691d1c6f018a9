"""The single-shot peers end to end with a scripted model: dense, BM25, PropRAG, none, full context."""

from typing import Any

import pytest
from sqlalchemy import Engine, select

from graphs.models.scripted_model import ScriptedReply
from graphs.peers.full_context import model_window
from graphs.peers.registry import run_method
from store.corpora import corpus_id
from store.engine import transaction
from store.ledger_models import LlmCall
from store.passage_writes import add_passages
from tests.fixtures.films import services
from tests.fixtures.peers import (
    ANSWER,
    CLOSED_BOOK,
    call_kinds,
    expected_tally,
    films_with_graph,
    prompts,
    rule,
    run_peer,
    shown_titles,
)

QUESTION = "Where was the director of Blue Harbor born?"


@pytest.mark.parametrize(
    ("method", "settings", "titles"),
    [
        ("dense", {"k": 2}, ["Blue Harbor", "Lena Marsh"]),
        ("bm25", {"k": 2}, ["Blue Harbor", "Tomas Reyd"]),
        ("proprag", {"k": 2}, ["Blue Harbor", "Lena Marsh"]),
        # The whole corpus, in the order it was added.
        ("full-context", {}, ["Blue Harbor", "Tomas Reyd", "Ivo Strand", "Lena Marsh"]),
    ],
)
async def test_a_reader_answers_once_from_its_passages(
    engine: Engine, database_url: str, method: str, settings: dict[str, Any], titles: list[str]
) -> None:
    ids = films_with_graph(engine)
    svc = services(
        engine,
        database_url,
        [rule(ANSWER, f"Question: {QUESTION}", reply={"answer": " Lisbon (Portugal) "})],
    )
    state, nodes = await run_peer(method, svc, QUESTION, thread=f"{method}-1", **settings)

    middle = "read_context" if method == "full-context" else "retrieve"
    assert nodes == ["start", middle, "answer"]
    assert call_kinds(svc) == [ANSWER]
    assert shown_titles(prompts(svc)[0]) == titles
    assert state["passages"] == [ids[t] for t in titles]
    assert (state["question"], state["final_answer"], state["error"]) == (QUESTION, "Lisbon", None)
    tokens = state["tokens"]
    assert (tokens["input_tokens"], tokens["output_tokens"], tokens["calls"]) == expected_tally(
        [ANSWER]
    )
    assert tokens["by_node"] == {"answer": {"input": 400, "output": 6, "calls": 1}}
    with transaction(engine) as session:
        ledger = session.execute(select(LlmCall.node, LlmCall.run_id)).all()
    assert ledger == [("answer", f"{method}-1")]


async def test_no_context_answers_closed_book(engine: Engine, database_url: str) -> None:
    svc = services(engine, database_url, [rule(CLOSED_BOOK, reply={"answer": "Porto"})])
    # No corpus is read: the films corpus is not even indexed.
    state, nodes = await run_peer("none", svc, f"  {QUESTION} ")

    assert nodes == ["start", "answer"]
    assert prompts(svc)[0].endswith(f"Question: {QUESTION}")
    assert (state["final_answer"], state["passages"], state["corpus_id"]) == ("Porto", [], None)
    assert state["tokens"]["calls"] == 1 and state["tokens"]["input_tokens"] == 60


async def test_full_context_refuses_a_context_over_the_window_without_a_call(
    engine: Engine, database_url: str
) -> None:
    films_with_graph(engine)
    add_passages(engine, corpus_id(engine, "films"), [("Filler", "word " * 9000)])
    svc = services(engine, database_url, [rule(ANSWER, reply={"answer": "Lisbon"})])

    # The window of the local model is its n_ctx; other providers are not checked.
    assert model_window("local") == 8192
    assert model_window("gemini:gemini-2.5-flash") is None
    state, nodes = await run_peer("full-context", svc, QUESTION, chat_model="local")
    assert nodes == ["start", "read_context"]
    assert prompts(svc) == []
    assert state["final_answer"] == ""
    assert state["error"].startswith("the whole context is about 11")
    assert state["error"].endswith(
        "exceeds the 8192-token window of scripted; use a model with a longer window "
        "(window_tokens) or a retrieval method"
    )
    assert "\n" not in state["error"]
    assert state["tokens"]["calls"] == 0

    # An explicit window wins; a small corpus under it is answered.
    small, _ = await run_peer("full-context", svc, QUESTION, thread="t2", window_tokens=100_000)
    assert (small["final_answer"], small["error"]) == ("Lisbon", None)


async def test_full_context_keeps_the_models_own_overflow_refusal(
    engine: Engine, database_url: str
) -> None:
    films_with_graph(engine)
    refusal = (
        "prompt is about 9100 tokens but q.gguf was loaded with n_ctx=8192; "
        "shorten the prompt or raise n_ctx"
    )
    svc = services(engine, database_url, [ScriptedReply(when=[ANSWER], reply="", error=refusal)])
    # The estimate lets this small corpus through; the model itself refuses it.
    state, nodes = await run_peer("full-context", svc, QUESTION, chat_model="local")
    assert nodes == ["start", "read_context", "answer"]
    assert state["final_answer"] == ""
    assert state["error"].endswith(f"failed after 1 attempt(s): RuntimeError: {refusal}")


async def test_run_method_answers_through_the_registry(engine: Engine, database_url: str) -> None:
    films_with_graph(engine)
    svc = services(engine, database_url, [rule(ANSWER, reply={"answer": "Lisbon"})])
    state = await run_method("dense", QUESTION, "films", services=svc, thread_id="eval-1", k=1)
    assert (state["question"], state["final_answer"], state["tokens"]["calls"]) == (
        QUESTION,
        "Lisbon",
        1,
    )
    assert len(state["passages"]) == 1
    with pytest.raises(ValueError, match="method dense answers from a corpus; none was named"):
        await run_method("dense", QUESTION, None, services=svc)


def test_bad_peer_settings_are_refused() -> None:
    from graphs.peers.registry import method_context

    with pytest.raises(ValueError, match="k must be at least 1, not 0"):
        method_context("dense", "films", k=0)
    with pytest.raises(TypeError, match=r"unknown prism settings \['rounds'\]"):
        method_context("prism", "films", rounds=2)
    with pytest.raises(ValueError, match="unknown method 'hippo'"):
        method_context("hippo", "films")
