"""Failing index batches: a retry keeps one failure row, a crash stays pending, errors are short."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from graphs.indexing.context import IndexContext
from graphs.indexing.graph import build_index_graph
from graphs.indexing.state import IndexState
from graphs.models.scripted_model import ScriptedChatModel, ScriptedReply
from nodes.indexing.extraction_types import BatchOutcome, PassageInput
from nodes.indexing.index_batch import index_batch, one_line_error
from store.corpora import corpus_id, ensure_corpus
from store.failures import list_failures
from tests.fixtures.indexing import DEISSEROTH, EAGLEMAN, SUDHOF, single
from tests.graph.test_index_graph import SAMPLE, services


async def test_retry_failed_replaces_the_failure_rows(engine: Engine, database_url: str) -> None:
    model = ScriptedChatModel(
        rules=[
            ScriptedReply(when=["Return exactly 3"], reply="{not json"),
            single("Thomas C. Sudhof", SUDHOF),
            single("David Eagleman", EAGLEMAN),
            ScriptedReply(when=["Title: Karl Deisseroth"], reply='{"passages": []}'),
        ]
    )
    graph = build_index_graph(services(engine, database_url, model))
    retry = IndexContext(extractor="llm", retry_failed=True)
    state: IndexState = {"corpus": "r", "passages": SAMPLE}
    first = (await graph.ainvoke(state, context=retry))["summary"]
    assert (first["passages_failed"], first["failures"]) == (1, 1)
    for _ in range(2):  # failing again: the latest failure only, never a growing count
        again = (await graph.ainvoke(state, context=retry))["summary"]
        assert (again["passages_done"], again["passages_failed"], again["failures"]) == (2, 1, 1)
    (row,) = list_failures(engine, corpus_id(engine, "r"))
    assert row.title == "Karl Deisseroth"

    fixed = ScriptedChatModel(rules=[single("Karl Deisseroth", DEISSEROTH)])
    graph = build_index_graph(services(engine, database_url, fixed))
    last = (await graph.ainvoke(state, context=retry))["summary"]
    assert (last["passages_done"], last["passages_failed"], last["failures"]) == (3, 0, 0)


async def test_a_crashing_batch_stays_pending_with_one_line_and_no_traceback(
    engine: Engine, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Crashing:
        name = "crashing"
        default_batch_size = 2

        async def extract(self, passages: Sequence[PassageInput], corpus_id: int) -> BatchOutcome:
            raise ConnectionError("server closed the connection unexpectedly")

    corpus = ensure_corpus(engine, "k", "hash")
    svc = services(engine, database_url, ScriptedChatModel(rules=[]))
    with caplog.at_level(logging.WARNING):
        report = await index_batch(
            svc,
            Crashing(),
            corpus_id=corpus,
            passages=[PassageInput(1, "A", "a"), PassageInput(2, "B", "b")],
            type_threshold=0.8,
        )
    assert (report.passages_pending, report.passages_done) == (2, 0)
    assert report.error == "ConnectionError: server closed the connection unexpectedly"
    assert caplog.records == []  # the CLI prints report.error once; no trace at normal levels


def test_a_database_error_is_reported_as_its_first_line() -> None:
    try:
        raise OperationalError("INSERT INTO passages ...", {}, ValueError("server closed\nSQL: x"))
    except OperationalError as exc:
        assert one_line_error(exc) == "OperationalError: server closed"
