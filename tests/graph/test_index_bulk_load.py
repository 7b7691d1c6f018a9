"""A large load drops the unit and passage vector indexes and builds them once at the end."""

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine

from evals.bench.index import synthetic_passages
from graphs.indexing.context import IndexContext
from graphs.indexing.graph import build_index_graph
from graphs.models.scripted_model import ScriptedChatModel
from graphs.runtime.services import Services
from nodes.embedding import HashingEmbedder
from store.corpora import corpus_id
from store.grasp_retrieval import RetrievalParams, dense_evidence, search_entities
from store.vector_indexes import (
    build_vector_indexes,
    drop_vector_indexes,
    missing_vector_indexes,
    start_bulk_load,
)
from tests.graph.test_index_graph import services

PASSAGES = synthetic_passages(40, 4, seed=11)
BOTH = ["ix_propositions_embedding_hnsw", "ix_passages_embedding_hnsw"]


@pytest.fixture
def store(engine: Engine) -> Iterator[Engine]:
    """The test engine; whatever a test leaves dropped is built again for the next one."""
    yield engine
    build_vector_indexes(engine)


async def index(svc: Services, corpus: str, passages: list[dict[str, str]], **ctx: Any) -> Any:
    graph = build_index_graph(svc)
    state = await graph.ainvoke(
        {"corpus": corpus, "passages": passages},
        context=IndexContext(extractor="synthetic", batch_size=16, **ctx),
    )
    return state["summary"]["this_run"]


def retrieved(engine: Engine, corpus: str, query: np.ndarray) -> tuple[list[float], list[str]]:
    """Scores of the top propositions and texts of the top passages: what the indexes serve.

    Ids differ between two corpora of the same passages (and so do the orders of tied entities),
    so the propositions compare by score and the passages by text.
    """
    cid = corpus_id(engine, corpus)
    found = search_entities(
        engine, corpus=cid, query=query, keywords="", params=RetrievalParams(k_props=10)
    )
    passages = dense_evidence(engine, corpus=cid, query=query, k=5)
    return [round(s, 5) for _, s in found.propositions], [i["text"] for i in passages.items]


async def test_a_bulk_load_builds_both_indexes_and_retrieves_like_a_row_by_row_load(
    store: Engine, database_url: str
) -> None:
    svc = services(store, database_url, ScriptedChatModel(rules=[]))
    bulk = await index(svc, "bulk", PASSAGES, bulk_load_min_passages=10)
    assert bulk["bulk_load"] == 1
    assert bulk["vector_indexes_built"] == 2
    # The unit index is built beside passage embedding, the passage index after it.
    assert {"unit_index_build_ms", "index_build_ms"} <= set(bulk)
    assert bulk["propositions"] == 160
    assert missing_vector_indexes(store) == []
    # The same passages again, row by row into the rebuilt indexes (bulk loads turned off).
    rows = await index(svc, "rows", PASSAGES, bulk_load_min_passages=0)
    assert rows["bulk_load"] == 0
    assert "vector_indexes_built" not in rows
    embedder = HashingEmbedder()
    for query in ("Kaloise founded", "married in 1900", PASSAGES[7]["text"][:40]):
        vector = embedder.embed([query])[0]
        assert retrieved(store, "bulk", vector) == retrieved(store, "rows", vector)


async def test_an_interrupted_bulk_load_is_finished_by_the_next_run(
    store: Engine, database_url: str
) -> None:
    svc = services(store, database_url, ScriptedChatModel(rules=[]))
    await index(svc, "c", PASSAGES[:8], bulk_load_min_passages=0)
    drop_vector_indexes(store)  # as a bulk load killed before its build leaves the store
    assert missing_vector_indexes(store) == BOTH
    again = await index(svc, "c", PASSAGES[:8], bulk_load_min_passages=0)
    assert again["passages_skipped"] == 8
    assert again["bulk_load"] == 1
    assert again["vector_indexes_built"] == 2
    assert missing_vector_indexes(store) == []


async def test_small_or_disabled_loads_keep_the_indexes(store: Engine, database_url: str) -> None:
    svc = services(store, database_url, ScriptedChatModel(rules=[]))
    await index(svc, "c", PASSAGES[:30], bulk_load_min_passages=0)
    assert not start_bulk_load(store, 29, min_passages=30)  # below the minimum
    assert not start_bulk_load(store, 9, min_passages=5)  # 9 is under a third of 30
    assert not start_bulk_load(store, 30, min_passages=0)  # 0 turns bulk loads off
    assert missing_vector_indexes(store) == []
    assert start_bulk_load(store, 10, min_passages=5)  # a third of the store: worth a rebuild
    assert missing_vector_indexes(store) == BOTH
    assert build_vector_indexes(store, only=[BOTH[0]], workers=0) == BOTH[:1]
    assert missing_vector_indexes(store) == BOTH[1:]
    assert build_vector_indexes(store) == BOTH[1:]
    assert build_vector_indexes(store) == []
