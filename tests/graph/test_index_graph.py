from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from graphs.indexing.context import IndexContext
from graphs.indexing.corpus_files import read_corpus
from graphs.indexing.graph import build_index_graph
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from graphs.runtime.services import Services
from graphs.runtime.settings import Settings
from nodes.embedding import HashingEmbedder
from nodes.llm.client import LlmClient
from store.engine import transaction
from store.ledger_models import LlmCall
from store.models import ExtractionFailure, Proposition
from tests.fixtures.data import SHARED_DATA
from tests.fixtures.indexing import BATCH, EAGLEMAN, SUDHOF, single

SAMPLE = [
    {"title": p.title, "text": p.text} for p in read_corpus(SHARED_DATA / "sample_corpus.json")
]


def services(engine: Engine, url: str, model: ScriptedChatModel) -> Services:
    client = LlmClient(
        model=model, model_name="scripted", engine=engine, backoff_s=0.01, max_attempts=3
    )
    return Services(
        engine=engine,
        database_url=url,
        settings=Settings(),
        llm=client,
        extractor_llm=client,
        embedder=HashingEmbedder(),
    )


async def run(svc: Services, corpus: str, **context: Any) -> dict[str, Any]:
    graph = build_index_graph(svc)
    state = await graph.ainvoke(
        {"corpus": corpus, "passages": SAMPLE}, context=IndexContext(extractor="llm", **context)
    )
    return state["summary"]


def ledger(engine: Engine) -> list[tuple[str, int, int, bool]]:
    with transaction(engine) as session:
        rows = session.execute(
            select(
                LlmCall.node, LlmCall.input_tokens, LlmCall.output_tokens, LlmCall.cached
            ).order_by(LlmCall.id)
        ).all()
    return [tuple(r) for r in rows]  # type: ignore[misc]


async def test_index_graph_builds_the_three_layer_graph(engine: Engine, database_url: str) -> None:
    model = ScriptedChatModel(rules=[BATCH])
    summary = await run(services(engine, database_url, model), "sample")
    # 3 + 2 + 1 propositions; entities: Sudhof, Eagleman, Deisseroth, optogenetics and ONE
    # Stanford University ("university" mentions merge; "stanford university"|"school" merges too
    # only if its type vector is ≥ 0.80 alike — with the hashing embedder "school" and
    # "university" share no token, so it stays a separate entity).
    assert summary["propositions"] == 6
    assert summary["entities"] == 6
    assert summary["edges"] == 3 + 1 + 2 + 1 + 3
    assert (summary["passages_done"], summary["failures"]) == (3, 0)
    assert (summary["llm_calls"], summary["input_tokens"], summary["output_tokens"]) == (
        1,
        700,
        250,
    )
    assert summary["input_tokens_per_passage"] == pytest.approx(700 / 3)
    assert len(model.prompts) == 1

    again = await run(services(engine, database_url, model), "sample")
    assert again["propositions"] == 6 and len(model.prompts) == 1  # nothing re-extracted


async def test_cache_makes_reindexing_free_and_keeps_token_counts(
    engine: Engine, database_url: str
) -> None:
    model = ScriptedChatModel(rules=[BATCH])
    await run(services(engine, database_url, model), "first")
    second = await run(services(engine, database_url, model), "second")
    assert len(model.prompts) == 1  # the second corpus was served from the cache
    assert second["propositions"] == 6
    assert (second["llm_calls"], second["cached_llm_calls"], second["input_tokens"]) == (1, 1, 700)
    assert ledger(engine) == [("extract", 700, 250, False), ("extract", 700, 250, True)]


async def test_malformed_batch_is_retried_then_split_then_recorded(
    engine: Engine, database_url: str
) -> None:
    model = ScriptedChatModel(
        rules=[
            ScriptedReply(
                when=["Return exactly 3"], reply="{not json", input_tokens=700, output_tokens=5
            ),
            single("Thomas C. Sudhof", SUDHOF),
            single("David Eagleman", EAGLEMAN),
            ScriptedReply(
                when=["Title: Karl Deisseroth"],
                reply='{"passages": []}',
                input_tokens=150,
                output_tokens=4,
            ),
        ]
    )
    summary = await run(services(engine, database_url, model), "sample")
    # batch: 2 attempts; Sudhof and Eagleman 1 each; Deisseroth 2 attempts then recorded as failed.
    assert len(model.prompts) == 6
    assert (summary["passages_done"], summary["passages_failed"], summary["propositions"]) == (
        2,
        1,
        5,
    )
    with transaction(engine) as session:
        failure = session.execute(select(ExtractionFailure)).scalar_one()
    assert failure.raw_output == '{"passages": []}'
    assert "expected passage ids 1..1, got []" in failure.error
    assert summary["input_tokens"] == 2 * 700 + 2 * 200 + 2 * 150


async def test_provider_failure_leaves_passages_pending_for_a_rerun(
    engine: Engine, database_url: str
) -> None:
    failing = ScriptedChatModel(rules=[ScriptedReply(reply="", error="503 Service Unavailable")])
    summary = await run(services(engine, database_url, failing), "sample")
    assert len(failing.prompts) == 3  # max_attempts with backoff
    assert (summary["passages_pending"], summary["passages_done"], summary["failures"]) == (3, 0, 0)
    assert "503 Service Unavailable" in summary["errors"][0]

    healthy = ScriptedChatModel(rules=[BATCH])
    summary = await run(services(engine, database_url, healthy), "sample")
    assert (summary["passages_done"], summary["propositions"]) == (3, 6)


async def test_empty_and_oversized_passages(engine: Engine, database_url: str) -> None:
    long_text = "Alpha beta gamma. " * 20  # 360 chars → pieces of at most 200 chars
    model = ScriptedChatModel(
        rules=[
            ScriptedReply(
                when=["Title: Long"],
                reply='{"passages": [{"id": 1, "propositions": ["Alpha is near beta."], "entities": [["Alpha", "thing", [0]]]}]}',
                input_tokens=90,
                output_tokens=20,
            )
        ]
    )
    svc = services(engine, database_url, model)
    graph = build_index_graph(svc)
    state = await graph.ainvoke(
        {
            "corpus": "odd",
            "passages": [{"title": "Empty", "text": "   "}, {"title": "Long", "text": long_text}],
        },
        context=IndexContext(extractor="llm", max_passage_chars=200),
    )
    summary = state["summary"]
    assert len(model.prompts) == 2  # the long passage went in two pieces
    assert (summary["passages_done"], summary["passages_failed"], summary["propositions"]) == (
        1,
        1,
        2,
    )
    with transaction(engine) as session:
        error = session.execute(select(ExtractionFailure.error)).scalar_one()
        assert session.execute(select(func.count()).select_from(Proposition)).scalar_one() == 2
    assert error == "empty passage: nothing to extract"


def test_sample_passages_are_read(tmp_path: Path) -> None:
    assert [p["title"] for p in SAMPLE] == ["Thomas C. Sudhof", "David Eagleman", "Karl Deisseroth"]


async def test_stats_command_prints_the_summary_from_the_database(
    engine: Engine,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await run(services(engine, database_url, ScriptedChatModel(rules=[BATCH])), "sample")
    monkeypatch.setenv("DATABASE_URL", database_url)
    from graphs.cli.main import main

    assert main(["stats", "--corpus", "sample"]) == 0
    out = capsys.readouterr().out
    assert "3 (3 done, 0 failed, 0 pending)" in out
    assert "700 / 250" in out  # input / output tokens from the ledger
    assert main(["stats", "--corpus", "nope"]) == 1
    assert "no corpus named 'nope'" in capsys.readouterr().err
