"""Retrieval against a real PostgreSQL: dense (HNSW), BM25, entity scores and RankVote by hand.

The graph (corpus "a"); q = e0 and every proposition vector is c·e0 + √(1−c²)·e_i with its own
axis e_i, so its cosine to q is exactly c:

    passage P1 "Zorvik":   p1 "Zorvik founded Talmora."                  cos 0.9
                           p2 "Zorvik painted rivers."                   cos 0.8
    passage P2 "Quenlar":  p3 "Talmora borders Quenlar."                 cos 0.5
                           p4 "Quenlar exports copper and copper wire."  cos 0.3
    passage P3 "Miravel":  p5 "Miravel studied copper."                  cos 0.6
                           p6 "Miravel visited Talmora."                 cos 0.1

    entities (degree): Zorvik {p1,p2} (2), Talmora {p1,p3,p6} (3), Quenlar {p3,p4} (2),
                       Copper {p4,p5} (2), Miravel {p5,p6} (2)
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pytest
from sqlalchemy import Engine, select, text

from store.bm25 import bm25_passages, bm25_propositions
from store.corpora import ensure_corpus
from store.engine import transaction
from store.exact_search import exact_dense_propositions
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    set_passage_embeddings,
    write_extracted,
)
from store.grasp_retrieval import PassageHit, RetrievalParams, search_entities, vote_passages
from store.models import Corpus, Entity, Proposition
from store.passage_writes import add_passages
from store.retrieval import (
    DENSE_PROPOSITIONS,
    dense_propositions,
    hybrid_candidates,
    proposition_texts,
    vector_literal,
)

DIM = 384
T = TypeVar("T")
Q = np.eye(DIM, dtype=np.float32)[0]
COSINES = {1: 0.9, 2: 0.8, 3: 0.5, 4: 0.3, 5: 0.6, 6: 0.1}
TEXTS = {
    1: "Zorvik founded Talmora.",
    2: "Zorvik painted rivers.",
    3: "Talmora borders Quenlar.",
    4: "Quenlar exports copper and copper wire.",
    5: "Miravel studied copper.",
    6: "Miravel visited Talmora.",
}
# English lexemes by hand ("and" is a stop word; "copper" occurs twice in p4).
LEXEMES = {
    1: ["zorvik", "found", "talmora"],
    2: ["zorvik", "paint", "river"],
    3: ["talmora", "border", "quenlar"],
    4: ["quenlar", "export", "copper", "copper", "wire"],
    5: ["miravel", "studi", "copper"],
    6: ["miravel", "visit", "talmora"],
}
# passage → (title, its propositions, entities as (name, proposition indices in the passage))
PASSAGES = {
    1: ("Zorvik", [1, 2], [("Zorvik", (0, 1)), ("Talmora", (0,))]),
    2: ("Quenlar", [3, 4], [("Talmora", (0,)), ("Quenlar", (0, 1)), ("Copper", (1,))]),
    3: ("Miravel", [5, 6], [("Miravel", (0, 1)), ("Copper", (0,)), ("Talmora", (1,))]),
}

# RankVote as the paper has it
PAPER_VOTE = {"hit_weight": 0.0, "prior_weight": 0.0, "bridge_weight": 0.0, "page_weight": 0.0}


def vector(cosine: float, axis: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[0], v[axis] = cosine, math.sqrt(1 - cosine**2)
    return v


def bm25(docs: dict[int, list[str]], query: list[str]) -> dict[int, float]:
    """Plain BM25: k1 1.2, b 0.75, dl = distinct lexemes, idf = ln(1 + (N − df + .5)/(df + .5))."""
    n = len(docs)
    avgdl = sum(len(set(d)) for d in docs.values()) / n
    scores: dict[int, float] = {}
    for pid, doc in docs.items():
        tf = Counter(doc)
        for term in set(query):
            if tf[term]:
                df = sum(term in d for d in docs.values())
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                norm = 1.2 * (1 - 0.75 + 0.75 * len(set(doc)) / avgdl)
                scores[pid] = scores.get(pid, 0.0) + idf * tf[term] * 2.2 / (tf[term] + norm)
    return scores


@dataclass
class Graph:
    corpus: int
    passage: dict[int, int]  # P-number → row id
    prop: dict[int, int]  # p-number → row id
    entity: dict[str, int]  # name → row id

    def props(self, scores: dict[int, T]) -> dict[int, T]:
        """Translate row ids back to the p-numbers of the docstring."""
        back = {v: k for k, v in self.prop.items()}
        return {back[i]: s for i, s in scores.items()}


def build(engine: Engine, name: str, cosines: dict[int, float] = COSINES) -> Graph:
    corpus = ensure_corpus(engine, name, "test")
    rows = add_passages(
        engine,
        corpus,
        [(title, " ".join(TEXTS[p] for p in ps)) for title, ps, _ in PASSAGES.values()],
    )
    items = [
        ExtractedPassage(
            row.id,
            [TEXTS[p] for p in ps],
            np.stack([vector(cosines[p], p) for p in ps]),
            [ExtractedEntity(n, "Thing", idx) for n, idx in entities],
        )
        for row, (_, ps, entities) in zip(rows, PASSAGES.values(), strict=True)
    ]
    write_extracted(engine, corpus, items)
    with transaction(engine) as session:
        by_text = dict(
            session.execute(
                select(Proposition.text, Proposition.id).where(Proposition.corpus_id == corpus)
            ).all()
        )
        entities = dict(
            session.execute(select(Entity.name, Entity.id).where(Entity.corpus_id == corpus)).all()
        )
    return Graph(
        corpus,
        {n: row.id for n, row in zip(PASSAGES, rows, strict=True)},
        {p: by_text[t] for p, t in TEXTS.items()},
        entities,
    )


@pytest.fixture
def graph(engine: Engine) -> Graph:
    return build(engine, "a")


def test_lexemes_and_counters_are_the_hand_counted_ones(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        rows = session.execute(
            select(Proposition.id, text("tsvector_to_array(tsv)"), Proposition.n_lexemes)
        ).all()
        counters = session.execute(
            select(Corpus.n_propositions, Corpus.n_proposition_lexemes).where(
                Corpus.id == graph.corpus
            )
        ).one()
    stored = {pid: (sorted(lexemes), n) for pid, lexemes, n in rows}
    assert graph.props(stored) == {p: (sorted(set(lx)), len(set(lx))) for p, lx in LEXEMES.items()}
    # N = 6, Σ dl = 3 + 3 + 3 + 4 + 3 + 3 = 19 → avgdl = 19/6
    assert tuple(counters) == (6, 19)
    assert len(graph.entity) == 5


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


def test_bm25_ranks_the_rarer_keyword_first(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        scores = bm25_propositions(session, graph.corpus, "painted Talmora", 10)
        copper = bm25_propositions(session, graph.corpus, "copper", 10)
    # N = 6, avgdl = 19/6; every matching doc has tf = 1, dl = 3:
    #   tf part = 2.2 / (1 + 1.2·(0.25 + 0.75·3/(19/6))) = 2.2 / 2.152632 = 1.022005
    #   paint:   df 1 → idf ln(1 + 5.5/1.5) = 1.540445 → p2 = 1.574342
    #   talmora: df 3 → idf ln(1 + 3.5/3.5) = 0.693147 → p1 = p3 = p6 = 0.708400
    assert list(graph.props(scores)) == [2, 1, 3, 6]
    assert graph.props(scores) == pytest.approx({2: 1.574342, 1: 0.708400, 3: 0.708400, 6: 0.7084})
    assert graph.props(scores) == pytest.approx(bm25(LEXEMES, ["paint", "talmora"]))
    # copper: df 2 → idf ln(1 + 4.5/2.5) = 1.029619; p4 has tf 2, dl 4: 2·2.2/(2 + 1.2·(0.25 +
    # 0.75·4/(19/6))) = 1.280243 → 1.318165; p5 tf 1, dl 3 → 1.029619 · 1.022005 = 1.052276
    assert graph.props(copper) == pytest.approx({4: 1.318165, 5: 1.052276})
    with transaction(engine) as session:
        assert bm25_propositions(session, graph.corpus, "the and of", 10) == {}
        assert bm25_propositions(session, graph.corpus, "   ", 10) == {}
        # compound lexemes and quotes are matched literally, never turned into phrases or errors
        assert bm25_propositions(session, graph.corpus, "state-of-the-art O'Brien a\\b", 10) == {}


def test_bm25_reads_each_words_best_postings_up_to_the_cap(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        copper = bm25_propositions(session, graph.corpus, "copper", 10, cap=1)
        talmora = bm25_propositions(session, graph.corpus, "Talmora", 10, cap=2)
        both = bm25_propositions(session, graph.corpus, "copper Talmora", 10, cap=1)
    # copper: p4 (tf 2) weighs more than p5 (tf 1), so the one posting read is p4's, scored exactly
    # (df still counts both postings)
    assert graph.props(copper) == pytest.approx({4: 1.318165})
    # Talmora: p1, p3 and p6 weigh the same (tf 1, dl 3), so the lower ids come first
    assert graph.props(talmora) == pytest.approx({1: 0.708400, 3: 0.708400})
    # the cap is per word: copper's best posting and Talmora's
    assert graph.props(both) == pytest.approx({4: 1.318165, 1: 0.708400})
    # visited units do not use up the cap: the next best postings take their place
    with transaction(engine) as session:
        unvisited = bm25_propositions(
            session, graph.corpus, "Talmora", 10, exclude=[graph.prop[1]], cap=2
        )
    assert graph.props(unvisited) == pytest.approx({3: 0.708400, 6: 0.708400})


def test_bm25_exclusion_keeps_document_frequencies(engine: Engine, graph: Graph) -> None:
    with transaction(engine) as session:
        scores = bm25_propositions(session, graph.corpus, "Talmora", 10, exclude=[graph.prop[1]])
    # p1 is visited, but talmora still occurs in 3 of 6 propositions: idf stays ln 2
    assert graph.props(scores) == pytest.approx({3: 0.708400, 6: 0.708400})


def test_bm25_follows_the_corpus_as_it_grows(engine: Engine, graph: Graph) -> None:
    (row,) = add_passages(engine, graph.corpus, [("Ships", "Quenlar painted ships.")])
    write_extracted(
        engine, graph.corpus, [ExtractedPassage(row.id, ["Quenlar painted ships."], Q[None, :])]
    )
    with transaction(engine) as session:
        scores = bm25_propositions(session, graph.corpus, "painted Talmora", 10)
        p7 = session.execute(select(Proposition.id).where(Proposition.passage_id == row.id))
        graph.prop[7] = p7.scalar_one()
    # N = 7, Σ dl = 19 + 3 = 22 → avgdl 22/7; tf part = 2.2/(1 + 1.2·(0.25 + 0.75·3/(22/7)))
    # = 2.2/2.159091 = 1.018947; paint df 2 → idf ln(1 + 5.5/2.5) = 1.163151 → p2 = p7 =
    # 1.185189; talmora df 3 → idf ln(1 + 4.5/3.5) = 0.826679 → p1 = p3 = p6 = 0.842342
    grown = {**LEXEMES, 7: ["quenlar", "paint", "ship"]}
    assert graph.props(scores) == pytest.approx(
        {2: 1.185189, 7: 1.185189, 1: 0.842342, 3: 0.842342, 6: 0.842342}
    )
    assert graph.props(scores) == pytest.approx(bm25(grown, ["paint", "talmora"]))


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
