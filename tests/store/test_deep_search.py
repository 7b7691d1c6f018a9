"""The baselines' deeper HNSW search: its depth, its scope, and exact rankings beside a twin corpus."""

from __future__ import annotations

import numpy as np
from sqlalchemy import Engine, text

from store.corpora import ensure_corpus
from store.engine import transaction
from store.graph_writes import set_passage_embeddings
from store.passage_search import ranked_dense_passages
from store.passage_writes import add_passages
from store.retrieval import DEEP_EF_SEARCH, search_deeply

DIM = 384


def ef_search(engine: Engine, deep: bool) -> str:
    with transaction(engine) as session:
        if deep:
            search_deeply(session)
        return str(session.execute(text("SHOW hnsw.ef_search")).scalar())


def test_the_deeper_search_lasts_one_transaction(engine: Engine) -> None:
    assert ef_search(engine, deep=True) == str(DEEP_EF_SEARCH)
    # the next transaction on the pooled connection is back at the engine's depth
    assert ef_search(engine, deep=False) == "100"


def test_dense_ranking_is_exact_beside_a_twin_corpus(engine: Engine) -> None:
    # Two corpora whose passages carry the same 300 vectors (a corpus indexed twice under two
    # names): the ranking of one is its own passages by exact cosine, none of the twin's.
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = {}
    for name in ("one", "twin"):
        corpus = ensure_corpus(engine, name, "test")
        rows = add_passages(engine, corpus, [(f"T{i}", f"{name} passage {i}.") for i in range(300)])
        set_passage_embeddings(engine, [row.id for row in rows], vectors)
        ids[name] = (corpus, [row.id for row in rows])
    corpus, own = ids["one"]
    query = vectors[11] + 0.5 * vectors[42]
    query /= np.linalg.norm(query)
    exact = [own[i] for i in np.argsort(-(vectors @ query), kind="stable")[:10]]
    assert ranked_dense_passages(engine, corpus, query, 10) == exact
