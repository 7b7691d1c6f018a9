"""Issue 34's additions to the GRASP step on the hand graph of retrieval_corpus.py.

Containment there: P1 ∋ {Zorvik, Talmora}, P2 ∋ {Talmora, Quenlar, Copper},
P3 ∋ {Miravel, Copper, Talmora}; so D(Talmora) = {P1, P2, P3}, D(Copper) = {P2, P3},
D(Zorvik) = {P1}.
"""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import Engine, select

from store.bridge import bridge_shares, page_passages
from store.corpora import ensure_corpus
from store.engine import transaction
from store.graph_writes import ExtractedEntity, ExtractedPassage, write_extracted
from store.grasp_retrieval import PassageHit, RetrievalParams, search_entities, vote_passages
from store.models import Entity
from store.passage_writes import PassageRow, add_passages
from tests.store.retrieval_corpus import DIM, Graph, Q, build


@pytest.fixture
def graph(engine: Engine) -> Graph:
    return build(engine, "bridge")


def test_bridge_shares_spread_each_origin_entity_over_its_passages(
    engine: Engine, graph: Graph
) -> None:
    entities = [graph.entity[n] for n in ("Talmora", "Zorvik", "Copper")]
    with transaction(engine) as session:
        # From P1: Talmora (in P1) gives 1/3 to P2 and P3; Zorvik has no other passage; Copper
        # is not in P1, so it bridges nothing.
        from_p1 = bridge_shares(session, entities, graph.passage[1])
        # From P3: Talmora 1/3 to P1 and P2, Copper 1/2 to P2 → P2 = 5/6.
        from_p3 = bridge_shares(session, entities, graph.passage[3])
        excluded = bridge_shares(session, entities, graph.passage[3], [graph.passage[2]])
        assert bridge_shares(session, [], graph.passage[1]) == {}
    assert from_p1 == pytest.approx({graph.passage[2]: 1 / 3, graph.passage[3]: 1 / 3})
    assert from_p3 == pytest.approx({graph.passage[1]: 1 / 3, graph.passage[2]: 5 / 6})
    assert excluded == pytest.approx({graph.passage[1]: 1 / 3})


def titled_corpus(
    engine: Engine, name: str, passages: dict[str, tuple[int, list[str]]]
) -> tuple[int, list[PassageRow]]:
    """A corpus of titled passages, each with its number of units, every one naming its entities."""
    corpus = ensure_corpus(engine, name, "test")
    rows = add_passages(
        engine, corpus, [(title, f"{title} text {n}.") for title, (n, _) in passages.items()]
    )
    axes = iter(range(1, DIM))
    write_extracted(
        engine,
        corpus,
        [
            ExtractedPassage(
                row.id,
                [f"{title} unit {i}." for i in range(n)],
                np.stack([np.eye(DIM, dtype=np.float32)[next(axes)] for _ in range(n)]),
                [ExtractedEntity(entity, "Person", tuple(range(n))) for entity in entities],
            )
            for row, (title, (n, entities)) in zip(rows, passages.items(), strict=True)
        ],
    )
    return corpus, rows


def test_an_entitys_share_follows_its_units(engine: Engine) -> None:
    # Nolan is named in 1 unit of "Film X", 3 of "Nolan", 1 of "Film Y": from "Film X" the
    # share goes 3/5 to "Nolan" and 1/5 to "Film Y" (a passage about him, not a mention).
    corpus, rows = titled_corpus(
        engine,
        "units",
        {"Film X": (1, ["Nolan"]), "Nolan": (3, ["Nolan"]), "Film Y": (1, ["Nolan"])},
    )
    with transaction(engine) as session:
        nolan = session.execute(
            select(Entity.id).where(Entity.corpus_id == corpus, Entity.name == "Nolan")
        ).scalar_one()
        shares = bridge_shares(session, [nolan], rows[0].id)
        capped = bridge_shares(session, [nolan], rows[0].id, max_degree=4)
    assert shares == pytest.approx({rows[1].id: 3 / 5, rows[2].id: 1 / 5})
    # named in 5 units, above a cap of 4: a hub, it bridges nothing
    assert capped == {}


def test_the_bridge_term_lifts_the_best_hits_neighbours(engine: Engine, graph: Graph) -> None:
    chosen = [graph.entity[n] for n in ("Talmora", "Zorvik", "Copper")]
    hits = [PassageHit(passage_id=graph.passage[1], score=1.2)]
    params = RetrievalParams(hit_weight=0.0, prior_weight=0.0, bridge_weight=1.0, page_weight=0.0)
    # Vote over Talmora ∪ Zorvik ∪ Copper by cosine: p1 .9 (P1), p2 .8 (P1), p5 .6 (P3),
    # p3 .5 (P2), p4 .3 (P2), p6 .1 (P3): P1 1 + 1/2 = 1.5, P3 1/3 + 1/6 = 0.5,
    # P2 1/4 + 1/5 = 0.45; scaled by 1.5: P1 1, P3 1/3, P2 0.3. Bridge from P1 (s 1.2):
    # Talmora's 1/3 each to P2 and P3 → + 0.4 each.
    vote = vote_passages(
        engine, corpus=graph.corpus, query=Q, entities=chosen, params=params, hits=hits
    )
    assert [v["id"] for v in vote.items] == [graph.passage[n] for n in (1, 3, 2)]
    assert [v["score"] for v in vote.items] == pytest.approx([1.0, 1 / 3 + 0.4, 0.3 + 0.4])
    # A passage already shown (p3 visited: P2 read) gets no bridge and no vote from p3:
    # p1 r1, p2 r2, p5 r3, p4 r4, p6 r5 → P1 1.5, P3 1/3 + 1/5, P2 1/4; scaled by 1.5.
    seen = vote_passages(
        engine,
        corpus=graph.corpus,
        query=Q,
        entities=chosen,
        params=params,
        hits=hits,
        visited_propositions=[graph.prop[3]],
    )
    assert dict((v["id"], v["score"]) for v in seen.items) == pytest.approx(
        {
            graph.passage[1]: 1.0,
            graph.passage[3]: (1 / 3 + 1 / 5) / 1.5 + 0.4,
            graph.passage[2]: (1 / 4) / 1.5,
        }
    )
    # every weight 0 is the paper's RankVote, unscaled
    plain = vote_passages(
        engine,
        corpus=graph.corpus,
        query=Q,
        entities=chosen,
        params=RetrievalParams(
            hit_weight=0.0, prior_weight=0.0, bridge_weight=0.0, page_weight=0.0
        ),
        hits=hits,
    )
    assert [v["score"] for v in plain.items] == pytest.approx([1.5, 0.5, 0.45])


def test_the_best_hits_entities_are_traversed_whatever_their_score(
    engine: Engine, graph: Graph
) -> None:
    # k_props 3: hits p2 (1.1), p1 (1.034990), p3 (0.634990); scores Zorvik 1.509666,
    # Talmora 0.964163, Quenlar 0.449005 (retrieval_corpus's hand values). Top 1: Zorvik; the best
    # two hits add Talmora (in p1); the best three add Quenlar (in p3) after it.
    def names(hit_entities: int) -> list[str]:
        params = RetrievalParams(k_props=3, k_entities=1, hit_entities=hit_entities)
        found = search_entities(
            engine, corpus=graph.corpus, query=Q, keywords="painted Talmora", params=params
        )
        return [e["name"] for e in found.entities]

    assert names(0) == ["Zorvik"]
    assert names(1) == ["Zorvik"]
    assert names(2) == ["Zorvik", "Talmora"]
    assert names(3) == ["Zorvik", "Talmora", "Quenlar"]


def page_corpus(engine: Engine) -> dict[str, int]:
    """A film naming its director and one actor, their pages, and a passage that only names him.

    The director's page is titled in capitals: the match ignores case.
    """
    named = {
        "Film X": (1, ["Nolan", "Caine"]),
        "NOLAN": (1, ["Nolan"]),
        "Caine": (1, ["Caine"]),
        "Review": (1, ["Nolan"]),
    }
    corpus, rows = titled_corpus(engine, "pages", named)
    ids = {title: row.id for row, title in zip(rows, named, strict=True)}
    return ids | {"corpus": corpus}


def test_page_passages_are_the_passages_titled_by_an_entity_the_origin_names(
    engine: Engine,
) -> None:
    ids = page_corpus(engine)
    with transaction(engine) as session:
        from_film = page_passages(session, ids["corpus"], ids["Film X"])
        without_caine = page_passages(session, ids["corpus"], ids["Film X"], [ids["Caine"]])
        # "Review" names Nolan but is titled by no entity: a page of no one.
        from_review = page_passages(session, ids["corpus"], ids["Review"])
        # A page's origin is not its own page.
        from_caine = page_passages(session, ids["corpus"], ids["Caine"])
    assert from_film == sorted([ids["NOLAN"], ids["Caine"]])
    assert without_caine == [ids["NOLAN"]]
    assert from_review == [ids["NOLAN"]]
    assert from_caine == []


def test_the_page_term_adds_the_best_hits_score_to_its_pages(engine: Engine) -> None:
    ids = page_corpus(engine)
    entities = select(Entity.id).where(Entity.corpus_id == ids["corpus"])
    with transaction(engine) as session:
        chosen = list(session.execute(entities).scalars())
    hits = [
        PassageHit(passage_id=ids["Film X"], score=1.2),
        PassageHit(passage_id=ids["Review"], score=0.4),
    ]

    def scores(page_weight: float) -> dict[int, float]:
        params = RetrievalParams(
            prior_weight=0.0, bridge_weight=0.0, page_weight=page_weight, k_passages=4
        )
        vote = vote_passages(
            engine, corpus=ids["corpus"], query=Q, entities=chosen, params=params, hits=hits
        )
        return {v["id"]: v["score"] for v in vote.items}

    without, with_pages = scores(0.0), scores(0.5)
    # From the best hit "Film X" (s 1.2), its director's and actor's pages gain 0.5 · 1.2.
    lift = {p: with_pages[p] - without[p] for p in without}
    assert lift == pytest.approx(
        {ids["Film X"]: 0.0, ids["NOLAN"]: 0.6, ids["Caine"]: 0.6, ids["Review"]: 0.0}
    )
