"""search_entities and RankVote's vote_passages on the hand graph, ranked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import Engine

from store.graph_writes import set_passage_embeddings
from store.grasp_retrieval import PassageHit, RetrievalParams, search_entities, vote_passages
from tests.store.retrieval_corpus import PASSAGES, TEXTS, Graph, Q, build, vector

# RankVote as the paper has it
PAPER_VOTE = {"hit_weight": 0.0, "prior_weight": 0.0, "bridge_weight": 0.0, "page_weight": 0.0}


@pytest.fixture
def graph(engine: Engine) -> Graph:
    return build(engine, "a")


def test_search_entities_hand_ranking(engine: Engine, graph: Graph) -> None:
    found = search_entities(
        engine, corpus=graph.corpus, query=Q, keywords="painted Talmora", params=RetrievalParams()
    )
    # s(p) = cos + 0.3 · bm25/1.574342: p1 0.9 + 0.3·0.449966 = 1.034990, p2 0.8 + 0.3 = 1.1,
    # p3 0.5 + 0.134990 = 0.634990, p4 0.3, p5 0.6, p6 0.1 + 0.134990 = 0.234990
    ranked = graph.props(dict(found.propositions))
    assert list(ranked) == [2, 1, 3, 5, 4, 6]
    assert list(ranked.values()) == pytest.approx(
        [1.1, 1.034990, 0.634990, 0.6, 0.3, 0.234990], abs=1e-5
    )
    # Zorvik (1.034990 + 1.1)/√2 = 1.509666; Talmora (1.034990 + 0.634990 + 0.234990)/√3 =
    # 1.099834; Quenlar (0.634990 + 0.3)/√2 = 0.661138; Copper 0.9/√2 = 0.636396;
    # Miravel (0.6 + 0.234990)/√2 = 0.590427
    assert [(e["name"], e["degree"]) for e in found.entities] == [
        ("Zorvik", 2),
        ("Talmora", 3),
        ("Quenlar", 2),
        ("Copper", 2),
        ("Miravel", 2),
    ]
    assert [e["score"] for e in found.entities] == pytest.approx(
        [1.509666, 1.099834, 0.661138, 0.636396, 0.590427], abs=1e-5
    )
    assert found.entities[0]["propositions"] == [TEXTS[2], TEXTS[1]]


def test_search_entities_top_k_and_visited(engine: Engine, graph: Graph) -> None:
    # k_props = 3: dense {p1, p2, p5} ∪ bm25 {p2, p1, p3} → best three p2, p1, p3.
    # Zorvik 2.134990/√2 = 1.509666; Talmora (1.034990 + 0.634990)/√3 = 0.964163 (the full degree
    # damps, not the linked subset); Quenlar 0.634990/√2 = 0.449005
    small = search_entities(
        engine,
        corpus=graph.corpus,
        query=Q,
        keywords="painted Talmora",
        params=RetrievalParams(k_props=3, hit_entities=0),
    )
    assert [e["name"] for e in small.entities] == ["Zorvik", "Talmora", "Quenlar"]
    assert [e["score"] for e in small.entities] == pytest.approx(
        [1.509666, 0.964163, 0.449005], abs=1e-5
    )
    # p2 visited: bm25 max is now 0.708400 (p1, p3, p6 → 1): s = p1 1.2, p3 0.8, p4 0.3, p5 0.6,
    # p6 0.4 → Talmora 2.4/√3 = 1.385641, Zorvik 1.2/√2 = 0.848528, Quenlar 1.1/√2 = 0.777817,
    # Miravel 1.0/√2 = 0.707107, Copper 0.9/√2 = 0.636396
    seen = search_entities(
        engine,
        corpus=graph.corpus,
        query=Q,
        keywords="painted Talmora",
        params=RetrievalParams(hit_entities=0),
        visited_propositions=[graph.prop[2]],
    )
    assert graph.prop[2] not in dict(seen.propositions)
    assert [e["name"] for e in seen.entities] == [
        "Talmora",
        "Zorvik",
        "Quenlar",
        "Miravel",
        "Copper",
    ]
    assert [e["score"] for e in seen.entities] == pytest.approx(
        [1.385641, 0.848528, 0.777817, 0.707107, 0.636396], abs=1e-5
    )
    # a visited entity is never a candidate again
    no_zorvik = search_entities(
        engine,
        corpus=graph.corpus,
        query=Q,
        keywords="painted Talmora",
        params=RetrievalParams(k_entities=2, hit_entities=0),
        visited_entities=[graph.entity["Zorvik"]],
    )
    assert [e["name"] for e in no_zorvik.entities] == ["Talmora", "Quenlar"]


def test_vote_passages_hand_ranking(engine: Engine, graph: Graph) -> None:
    chosen = [graph.entity["Talmora"], graph.entity["Quenlar"]]
    # propositions of Talmora ∪ Quenlar by cosine: p1 (P1, r1), p3 (P2, r2), p4 (P2, r3), p6 (P3, r4)
    # P1 = 1/1 = 1, P2 = 1/2 + 1/3 = 0.833333, P3 = 1/4 → top 2: P1, P2
    vote = vote_passages(
        engine,
        corpus=graph.corpus,
        query=Q,
        entities=chosen,
        params=RetrievalParams(k_passages=2, **PAPER_VOTE),
    )
    assert [(v["id"], v["title"]) for v in vote.items] == [
        (graph.passage[1], "Zorvik"),
        (graph.passage[2], "Quenlar"),
    ]
    assert [v["score"] for v in vote.items] == pytest.approx([1.0, 5 / 6])
    # every proposition of the winners, p2 included though no chosen entity links it
    assert sorted(vote.covered_propositions) == sorted(graph.prop[p] for p in (1, 2, 3, 4))
    # p1 visited: p3 r1, p4 r2 (P2 = 1 + 1/2 = 1.5), p6 r3 (P3 = 1/3)
    again = vote_passages(
        engine,
        corpus=graph.corpus,
        query=Q,
        entities=chosen,
        params=RetrievalParams(**PAPER_VOTE),
        visited_propositions=[graph.prop[1]],
    )
    assert [(v["id"], v["score"]) for v in again.items] == [
        (graph.passage[2], pytest.approx(1.5)),
        (graph.passage[3], pytest.approx(1 / 3)),
    ]
    # uniform vote: P2 = 2 (p3, p4), P1 = P3 = 1 → the tie goes to the smaller id, P1
    uniform = vote_passages(
        engine,
        corpus=graph.corpus,
        query=Q,
        entities=chosen,
        params=RetrievalParams(uniform_vote=True, **PAPER_VOTE),
    )
    assert [(v["id"], v["score"]) for v in uniform.items] == [
        (graph.passage[2], 2.0),
        (graph.passage[1], 1.0),
        (graph.passage[3], 1.0),
    ]
    assert (
        vote_passages(
            engine, corpus=graph.corpus, query=Q, entities=[], params=RetrievalParams()
        ).items
        == []
    )


def test_fused_vote_adds_the_search_hits_passages(engine: Engine, graph: Graph) -> None:
    # No entity chosen: the paper's vote is empty; the fused vote still returns the passages of
    # the search hits, scored by hit_weight · s(p) (no passage embeddings here, so no prior).
    hits = [
        PassageHit(passage_id=graph.passage[2], score=1.1),
        PassageHit(passage_id=graph.passage[1], score=0.9),
    ]
    fused = vote_passages(
        engine,
        corpus=graph.corpus,
        query=Q,
        entities=[],
        params=RetrievalParams(hit_weight=0.5, prior_weight=0.0),
        hits=hits,
    )
    assert [(v["id"], v["score"]) for v in fused.items] == [
        (graph.passage[2], pytest.approx(0.55)),
        (graph.passage[1], pytest.approx(0.45)),
    ]


def test_search_fetches_the_votes_dense_prior_beside_it(engine: Engine, graph: Graph) -> None:
    # Passage vectors on axes of their own (20 + n): cosines to q P1 0.2, P2 0.7, P3 0.4.
    passage_cos = {1: 0.2, 2: 0.7, 3: 0.4}
    set_passage_embeddings(
        engine,
        [graph.passage[n] for n in passage_cos],
        np.stack([vector(c, 20 + n) for n, c in passage_cos.items()]),
    )
    found = search_entities(
        engine, corpus=graph.corpus, query=Q, keywords="Talmora", params=RetrievalParams()
    )
    assert [(h["passage_id"], h["score"]) for h in found.prior] == [
        (graph.passage[2], pytest.approx(0.7, abs=1e-5)),
        (graph.passage[3], pytest.approx(0.4, abs=1e-5)),
        (graph.passage[1], pytest.approx(0.2, abs=1e-5)),
    ]
    no_prior = RetrievalParams(prior_weight=0.0)
    assert (
        search_entities(engine, corpus=graph.corpus, query=Q, keywords="", params=no_prior).prior
        == []
    )
    # The carried prior gives the very vote the vote's own fetch gives, visited passages included:
    # P2's propositions visited → P2 leaves the prior either way.
    chosen = [graph.entity["Miravel"]]
    for visited in ([], [graph.prop[3], graph.prop[4]]):
        kwargs = {
            "corpus": graph.corpus,
            "query": Q,
            "entities": chosen,
            # the prior at half weight and no bridge: this checks the carried prior alone
            "params": RetrievalParams(k_passages=3, prior_weight=0.5, bridge_weight=0.0),
            "visited_propositions": visited,
        }
        fetched = vote_passages(engine, **kwargs)  # type: ignore[arg-type]
        carried = vote_passages(engine, prior=found.prior, **kwargs)  # type: ignore[arg-type]
        assert carried == fetched
        # P3: its vote (the only one, scaled to 1) + 0.5 · 0.4; P2 = 0.5 · 0.7 (prior only);
        # P1 = 0.5 · 0.2
        expected = [(3, 1.2), (2, 0.35), (1, 0.1)] if not visited else [(3, 1.2), (1, 0.1)]
        assert [(v["id"], v["score"]) for v in carried.items] == [
            (graph.passage[n], pytest.approx(score, abs=1e-5)) for n, score in expected
        ]
    # The winners' propositions are all marked covered, in one round trip with their texts.
    assert sorted(fetched.covered_propositions) == sorted(
        graph.prop[p] for n in (1, 3) for p in PASSAGES[n][1]
    )
