"""Dense (HNSW, exact) and hybrid search on the hand graph, session settings, corpus isolation."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, text

from store.bm25 import bm25_passages, bm25_propositions
from store.engine import transaction
from store.exact_search import exact_dense_propositions
from store.grasp_retrieval import RetrievalParams, search_entities, vote_passages
from store.retrieval import (
    DENSE_PROPOSITIONS,
    dense_propositions,
    hybrid_candidates,
    proposition_texts,
    vector_literal,
)
from tests.store.retrieval_corpus import COSINES, LEXEMES, PASSAGES, TEXTS, Graph, Q, bm25, build


@pytest.fixture
def graph(engine: Engine) -> Graph:
    return build(engine, "a")


def test_dense_search_uses_hnsw_and_skips_excluded(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        # A six-row table would be scanned and sorted; forbid that so the HNSW path is tested.
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            session.execute(text(f"SET LOCAL {setting} = off"))
        plan = session.execute(
            text("EXPLAIN " + DENSE_PROPOSITIONS.text),
            {"q": vector_literal(Q), "corpus": graph.corpus, "k": 3, "exclude": [graph.prop[1]]},
        ).scalars()
        assert "ix_propositions_embedding_hnsw" in "\n".join(plan)
        top1 = dense_propositions(session, graph.corpus, Q, 1)
        top3 = dense_propositions(session, graph.corpus, Q, 3)
        rest = dense_propositions(
            session, graph.corpus, Q, 10, exclude=[graph.prop[1], graph.prop[2]]
        )
    assert graph.props(top1) == pytest.approx({1: 0.9}, abs=1e-5)
    assert graph.props(top3) == pytest.approx({1: 0.9, 2: 0.8, 5: 0.6}, abs=1e-5)
    # visited p1, p2 never come back; the other four do, nearest first
    assert list(graph.props(rest)) == [5, 3, 4, 6]


def test_the_exact_dense_search_scans_and_its_settings_end_with_its_transaction(
    engine: Engine, graph: Graph
) -> None:
    explain = text("EXPLAIN " + DENSE_PROPOSITIONS.text)
    params = {"q": vector_literal(Q), "corpus": graph.corpus, "k": 3, "exclude": []}
    with transaction(engine) as session:
        top3 = exact_dense_propositions(session, graph.corpus, Q, 3)
        plan = "\n".join(session.execute(explain, params).scalars())
    assert graph.props(top3) == pytest.approx({1: 0.9, 2: 0.8, 5: 0.6}, abs=1e-5)
    assert "ix_propositions_embedding_hnsw" not in plan
    with transaction(engine) as session:  # the next transaction may use the index again
        session.execute(text("SET LOCAL enable_seqscan = off"))
        session.execute(text("SET LOCAL enable_sort = off"))
        assert "ix_propositions_embedding_hnsw" in "\n".join(
            session.execute(explain, params).scalars()
        )


def test_hybrid_candidates_are_the_union_with_cosines_for_all(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        found = hybrid_candidates(session, graph.corpus, Q, "painted Talmora", 3)
        seen = hybrid_candidates(
            session, graph.corpus, Q, "painted Talmora", 3, exclude=[graph.prop[1]]
        )
        no_keywords = hybrid_candidates(session, graph.corpus, Q, "the of", 3)
    cos, lexical = found.cosine, found.lexical
    seen_cos, seen_lexical = seen.cosine, seen.lexical
    # stop words only: dense alone
    assert graph.props(no_keywords.cosine) == pytest.approx({1: 0.9, 2: 0.8, 5: 0.6}, abs=1e-5)
    assert no_keywords.lexical == {}
    # dense top 3: p1, p2, p5; BM25 top 3: p2, then p1 and p3 tie (0.708400, smaller id first)
    assert graph.props(cos) == pytest.approx({1: 0.9, 2: 0.8, 5: 0.6, 3: 0.5}, abs=1e-5)
    assert graph.props(lexical) == pytest.approx({2: 1.574342, 1: 0.708400, 3: 0.708400})
    # p1 visited: dense p2, p5, p3; BM25 p2, p3, p6 (df unchanged, so the same scores)
    assert graph.props(seen_cos) == pytest.approx({2: 0.8, 5: 0.6, 3: 0.5, 6: 0.1}, abs=1e-5)
    assert graph.props(seen_lexical) == pytest.approx({2: 1.574342, 3: 0.708400, 6: 0.708400})
    # every candidate comes with its text and passage (p3: "Talmora borders Quenlar.", in P2)
    assert graph.props(found.texts) == {
        p: (TEXTS[p], graph.passage[n])
        for n, (_, ps, _) in PASSAGES.items()
        for p in ps
        if p in (1, 2, 3, 5)
    }


def test_every_session_plans_searches_deeply_and_afresh(engine: Engine) -> None:
    with transaction(engine) as session:
        shown = [
            session.execute(text(f"SHOW {name}")).scalar()
            for name in ("hnsw.ef_search", "hnsw.iterative_scan", "plan_cache_mode")
        ]
    assert shown == ["100", "relaxed_order", "force_custom_plan"]


def test_retrieval_reads_inside_the_sessions_own_transaction(engine: Engine, graph: Graph) -> None:
    # Retrieval statements run on the session's driver connection: they see its uncommitted rows.
    with transaction(engine) as session:
        session.execute(
            text("UPDATE propositions SET text = 'Zorvik founded Quenlar.' WHERE id = :id"),
            {"id": graph.prop[1]},
        )
        seen = proposition_texts(session, [graph.prop[1]])
        session.rollback()
    assert seen == {graph.prop[1]: ("Zorvik founded Quenlar.", graph.passage[1])}
    with transaction(engine) as session:
        assert proposition_texts(session, [graph.prop[1]])[graph.prop[1]][0] == TEXTS[1]


def test_two_corpora_never_see_each_other(engine: Engine, graph: Graph) -> None:
    # corpus b: the same texts and entities, but every vector nearer to q than any of a's
    other = build(engine, "b", {p: 0.91 + p / 100 for p in COSINES})
    before = graph.props(dense_propositions_of(engine, graph))
    assert before == pytest.approx(COSINES, abs=1e-5)
    with transaction(engine) as session:
        lexical = bm25_propositions(session, graph.corpus, "painted Talmora", 50)
        passages = bm25_passages(session, graph.corpus, "painted rivers", 10)
        b_dense = dense_propositions(session, other.corpus, Q, 50)
    # a's BM25 still counts N = 6 and a's df alone
    assert graph.props(lexical) == pytest.approx(bm25(LEXEMES, ["paint", "talmora"]))
    assert list(passages) == [graph.passage[1]]
    assert set(b_dense) == set(other.prop.values())
    found = search_entities(
        engine, corpus=graph.corpus, query=Q, keywords="painted Talmora", params=RetrievalParams()
    )
    assert {e["id"] for e in found.entities} == set(graph.entity.values())
    assert {p for p, _ in found.propositions} == set(graph.prop.values())
    vote = vote_passages(
        engine,
        corpus=graph.corpus,
        query=Q,
        entities=[graph.entity["Talmora"]],
        params=RetrievalParams(),
    )
    assert {v["id"] for v in vote.items} <= set(graph.passage.values())
    assert set(vote.covered_propositions) <= set(graph.prop.values())


def dense_propositions_of(engine: Engine, graph: Graph) -> dict[int, float]:
    with transaction(engine) as session:
        return dense_propositions(session, graph.corpus, Q, 50)
