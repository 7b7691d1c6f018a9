"""The entity graph layer against a real PostgreSQL: edges, containment and reads by hand.

The corpus; q = e0 and every unit vector is c·e0 + √(1−c²)·e_i with its own axis e_i, so its
cosine to q is exactly c (passage vectors likewise, on axes 20+):

    P1 "Zorvik":   u1 "Zorvik founded Talmora."               {Zorvik, Talmora}          cos 0.9
                   u2 "Zorvik painted Talmora's rivers."      {Zorvik, Talmora}          cos 0.8
    P2 "Quenlar":  u3 "Talmora borders Quenlar."              {Talmora, Quenlar}         cos 0.5
                   u4 "Quenlar exports copper."               {Quenlar, Copper}          cos 0.3
    P3 "Miravel":  u5 "Miravel studied copper with Zorvik."   {Miravel, Copper, Zorvik}  cos 0.6
                   u6 "Miravel visited Talmora."              {Miravel, Talmora}         cos 0.1
    P4 "Notes":    u7 "Zorvick met Talmorra."                 {Zorvick, Talmorra}        cos 0.2

Name vectors are orthogonal axes (from 100 on) except Zorvick = 0.81·Zorvik + … (a synonym at the
0.8 threshold) and Talmorra = 0.79·Talmora + … (not one).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, select, text

from nodes.indexing.link_entities import LinkReport, link_entities
from store.corpora import corpus_stats, ensure_corpus
from store.engine import transaction
from store.entity_graph import (
    TOP_PROPOSITIONS,
    GraphEdges,
    entity_unit_cosines,
    graph_version,
    load_graph_edges,
    passage_cosines,
    passage_propositions,
    proposition_details,
    relation_cosines,
    top_propositions,
)
from store.entity_graph_links import LINK_SYNONYMS, use_hnsw_for_synonyms
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    set_passage_embeddings,
    write_extracted,
)
from store.models import Entity, Passage, Proposition
from store.passage_writes import add_passages
from tests.conftest import TABLES

DIM = 384
Q = np.eye(DIM, dtype=np.float32)[0]
UNITS = {
    1: ("Zorvik founded Talmora.", 0.9, ("Zorvik", "Talmora")),
    2: ("Zorvik painted Talmora's rivers.", 0.8, ("Zorvik", "Talmora")),
    3: ("Talmora borders Quenlar.", 0.5, ("Talmora", "Quenlar")),
    4: ("Quenlar exports copper.", 0.3, ("Quenlar", "Copper")),
    5: ("Miravel studied copper with Zorvik.", 0.6, ("Miravel", "Copper", "Zorvik")),
    6: ("Miravel visited Talmora.", 0.1, ("Miravel", "Talmora")),
    7: ("Zorvick met Talmorra.", 0.2, ("Zorvick", "Talmorra")),
}
PASSAGES = {
    1: ("Zorvik", (1, 2)),
    2: ("Quenlar", (3, 4)),
    3: ("Miravel", (5, 6)),
    4: ("Notes", (7,)),
}
PASSAGE_COS = {1: 0.7, 2: 0.4, 3: 0.55, 4: 0.05}
NAMES = ("Zorvik", "Talmora", "Quenlar", "Copper", "Miravel", "Zorvick", "Talmorra")


def vector(cosine: float, axis: int, base: int = 0) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[base], v[axis] = cosine, math.sqrt(1 - cosine**2)
    return v


def axis(i: int) -> np.ndarray:
    return np.eye(DIM, dtype=np.float32)[i]


NAME_VECTORS = {name: axis(100 + i) for i, name in enumerate(NAMES)}
NAME_VECTORS["Zorvick"] = vector(0.81, 150, base=100)
NAME_VECTORS["Talmorra"] = vector(0.79, 151, base=101)


class NameEmbedder:
    """The hand-made name vectors; fails on call number `fail_on` (an interrupted index)."""

    name, dim, cpu_bound = "names", DIM, False

    def __init__(self, fail_on: int = 0) -> None:
        self.calls, self.fail_on = 0, fail_on

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("embedder down")
        return np.stack([NAME_VECTORS[t] for t in texts])


def link(engine: Engine, corpus: int, chunk: int = 512, fail_on: int = 0, **kw: Any) -> LinkReport:
    services = SimpleNamespace(engine=engine, embedder=NameEmbedder(fail_on))
    return asyncio.run(link_entities(services, corpus, chunk=chunk, **kw))  # type: ignore[arg-type]


@dataclass
class Built:
    corpus: int
    passage: dict[int, int]  # P-number → row id
    unit: dict[int, int]  # u-number → row id
    entity: dict[str, int]  # name → row id


def write(engine: Engine, corpus: int, passages: Sequence[int]) -> None:
    rows = add_passages(
        engine,
        corpus,
        [(PASSAGES[n][0], " ".join(UNITS[u][0] for u in PASSAGES[n][1])) for n in passages],
    )
    items = []
    for n, row in zip(passages, rows, strict=True):
        units = PASSAGES[n][1]
        names = sorted({name for u in units for name in UNITS[u][2]}, key=NAMES.index)
        entities = [
            ExtractedEntity(
                name, "Thing", tuple(i for i, u in enumerate(units) if name in UNITS[u][2])
            )
            for name in names
        ]
        items.append(
            ExtractedPassage(
                row.id,
                [UNITS[u][0] for u in units],
                np.stack([vector(UNITS[u][1], u) for u in units]),
                entities,
            )
        )
    write_extracted(engine, corpus, items)
    set_passage_embeddings(
        engine, [r.id for r in rows], np.stack([vector(PASSAGE_COS[n], 20 + n) for n in passages])
    )


def ids(engine: Engine, corpus: int) -> Built:
    with transaction(engine) as session:
        passages = dict(
            session.execute(
                select(Passage.title, Passage.id).where(Passage.corpus_id == corpus)
            ).all()
        )
        units = dict(
            session.execute(
                select(Proposition.text, Proposition.id).where(Proposition.corpus_id == corpus)
            ).all()
        )
        entities = dict(
            session.execute(select(Entity.name, Entity.id).where(Entity.corpus_id == corpus)).all()
        )
    return Built(
        corpus,
        {n: passages[title] for n, (title, _) in PASSAGES.items() if title in passages},
        {u: units[t] for u, (t, _, _) in UNITS.items() if t in units},
        entities,
    )


def build(engine: Engine, name: str) -> Built:
    corpus = ensure_corpus(engine, name, "test")
    write(engine, corpus, [1, 2, 3, 4])
    link(engine, corpus)
    return ids(engine, corpus)


def by_name(edges: GraphEdges, built: Built) -> dict[str, Any]:
    """The layer with row ids replaced by names, P-numbers and u-numbers (version left out)."""
    entity = {v: k for k, v in built.entity.items()}
    passage = {v: k for k, v in built.passage.items()}
    return {
        "entities": sorted(entity[e] for e in edges.entity_ids),
        "passages": sorted(passage[p] for p in edges.passage_ids),
        "cooccurrence": sorted(
            (*sorted((entity[a], entity[b])), n) for a, b, n in edges.cooccurrence
        ),
        "synonyms": sorted(
            (*sorted((entity[a], entity[b])), round(s, 6)) for a, b, s in edges.synonyms
        ),
        "containment": sorted((entity[e], passage[p], n) for e, p, n in edges.containment),
    }


@pytest.fixture
def built(engine: Engine) -> Built:
    return build(engine, "a")


def test_synonyms_at_the_threshold(engine: Engine, built: Built) -> None:
    edges = load_graph_edges(engine, built.corpus)
    zorvik, zorvick = built.entity["Zorvik"], built.entity["Zorvick"]
    assert [(a, b) for a, b, _ in edges.synonyms] == [(zorvik, zorvick)]  # 0.79 is not linked
    assert edges.synonyms[0][2] == pytest.approx(0.81, abs=1e-6)
    assert corpus_stats(engine, "a").synonym_edges == 1


def test_a_lower_threshold_links_the_other_pair(engine: Engine) -> None:
    corpus = ensure_corpus(engine, "low", "test")
    write(engine, corpus, [1, 2, 3, 4])
    report = link(engine, corpus, threshold=0.75)
    assert (report.names_embedded, report.entities_linked, report.synonym_edges_added) == (7, 7, 2)
    edges = by_name(load_graph_edges(engine, corpus), ids(engine, corpus))
    assert [s[:2] for s in edges["synonyms"]] == [("Talmora", "Talmorra"), ("Zorvick", "Zorvik")]


def test_cooccurrence_and_containment_by_hand(engine: Engine, built: Built) -> None:
    edges = load_graph_edges(engine, built.corpus)
    named = by_name(edges, built)
    assert named["entities"] == sorted(NAMES)
    assert named["passages"] == [1, 2, 3, 4]
    assert named["cooccurrence"] == [
        ("Copper", "Miravel", 1),  # u5
        ("Copper", "Quenlar", 1),  # u4
        ("Copper", "Zorvik", 1),  # u5
        ("Miravel", "Talmora", 1),  # u6
        ("Miravel", "Zorvik", 1),  # u5
        ("Quenlar", "Talmora", 1),  # u3
        ("Talmora", "Zorvik", 2),  # u1, u2
        ("Talmorra", "Zorvick", 1),  # u7
    ]
    assert named["containment"] == [
        ("Copper", 2, 1),
        ("Copper", 3, 1),
        ("Miravel", 3, 2),
        ("Quenlar", 2, 2),
        ("Talmora", 1, 2),
        ("Talmora", 2, 1),
        ("Talmora", 3, 1),
        ("Talmorra", 4, 1),
        ("Zorvick", 4, 1),
        ("Zorvik", 1, 2),
        ("Zorvik", 3, 1),
    ]
    assert all(a < b for a, b, _ in edges.cooccurrence)
    stats = corpus_stats(engine, "a")
    assert (stats.cooccurrence_edges, stats.cooccurrence_units, stats.containment_rows) == (
        8,
        9,
        11,
    )


def test_reads_by_hand(engine: Engine, built: Built) -> None:
    u, e, p = built.unit, built.entity, built.passage
    top = top_propositions(engine, built.corpus, Q, 3)
    assert [(i, pid) for i, pid, _ in top] == [(u[1], p[1]), (u[2], p[1]), (u[5], p[3])]
    assert [c for _, _, c in top] == pytest.approx([0.9, 0.8, 0.6], abs=1e-6)

    details = proposition_details(engine, [u[5], u[7], 10_000])
    assert set(details) == {u[5], u[7]}
    five = details[u[5]]
    assert (five.passage_id, five.text) == (p[3], UNITS[5][0])
    assert five.entity_ids == tuple(sorted((e["Miravel"], e["Copper"], e["Zorvik"])))
    assert five.embedding.dtype == np.float32
    assert np.array_equal(five.embedding, vector(0.6, 5))

    assert passage_propositions(engine, [p[3], p[1]]) == [u[1], u[2], u[5], u[6]]
    assert passage_cosines(engine, built.corpus, Q) == pytest.approx(
        {p[n]: c for n, c in PASSAGE_COS.items()}, abs=1e-6
    )
    expected = {"Zorvik": 0.9, "Talmora": 0.9, "Quenlar": 0.5, "Copper": 0.6, "Miravel": 0.6}
    expected |= {"Zorvick": 0.2, "Talmorra": 0.2}
    assert entity_unit_cosines(engine, built.corpus, Q) == pytest.approx(
        {e[n]: c for n, c in expected.items()}, abs=1e-6
    )
    some = entity_unit_cosines(engine, built.corpus, Q, [e["Quenlar"], e["Copper"]])
    assert some == pytest.approx({e["Quenlar"]: 0.5, e["Copper"]: 0.6}, abs=1e-6)
    assert entity_unit_cosines(engine, built.corpus, Q, []) == {}

    pairs = [
        (e["Talmora"], e["Zorvik"]),
        (e["Talmora"], e["Miravel"]),
        (e["Quenlar"], e["Miravel"]),
    ]
    relations = relation_cosines(engine, built.corpus, Q, pairs)
    key = lambda a, b: (min(e[a], e[b]), max(e[a], e[b]))  # noqa: E731
    assert set(relations) == {key("Talmora", "Zorvik"), key("Talmora", "Miravel")}
    assert relations[key("Talmora", "Zorvik")] == (pytest.approx(0.9, abs=1e-6), u[1])
    assert relations[key("Talmora", "Miravel")] == (pytest.approx(0.1, abs=1e-6), u[6])
    assert relation_cosines(engine, built.corpus, Q, []) == {}


def test_two_corpora_with_the_same_names_never_meet(engine: Engine, built: Built) -> None:
    other = build(engine, "b")
    a, b = load_graph_edges(engine, built.corpus), load_graph_edges(engine, other.corpus)
    assert by_name(a, built) == by_name(b, other)  # same content, and no edge across
    a_entities, b_entities = set(built.entity.values()), set(other.entity.values())
    for edges, own in ((a, a_entities), (b, b_entities)):
        assert set(edges.entity_ids) == own
        assert {x for s in edges.synonyms for x in s[:2]} <= own
        assert {x for c in edges.cooccurrence for x in c[:2]} <= own
        assert {c[0] for c in edges.containment} <= own
    assert set(a.passage_ids) == set(built.passage.values())
    assert {i for i, _, _ in top_propositions(engine, other.corpus, Q, 20)} == set(
        other.unit.values()
    )
    assert set(passage_cosines(engine, built.corpus, Q)) == set(built.passage.values())
    assert set(entity_unit_cosines(engine, built.corpus, Q)) == a_entities
    assert set(entity_unit_cosines(engine, built.corpus, Q, list(b_entities))) == set()
    b_pairs = [(x, y) for x, y, _ in b.cooccurrence]
    assert relation_cosines(engine, built.corpus, Q, b_pairs) == {}
    assert len(relation_cosines(engine, other.corpus, Q, b_pairs)) == len(b_pairs)


def test_incremental_indexing_equals_a_full_build(engine: Engine, built: Built) -> None:
    full = load_graph_edges(engine, built.corpus)
    assert full.version == 2  # the batch, then one linking chunk
    with engine.begin() as conn:  # start again with the same ids: passages arrive in two batches
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    corpus = ensure_corpus(engine, "a", "test")
    assert graph_version(engine, corpus) == 0
    write(engine, corpus, [1, 2])
    assert graph_version(engine, corpus) == 1
    first = link(engine, corpus, chunk=3)  # 4 entities: two linking chunks
    assert (first.names_embedded, first.entities_linked, first.synonym_edges_added) == (4, 4, 0)
    assert graph_version(engine, corpus) == 3

    assert link(engine, corpus) == LinkReport()  # nothing left: a no-op
    write(engine, corpus, [1, 2])  # passages already done: a no-op too
    assert graph_version(engine, corpus) == 3

    write(engine, corpus, [3, 4])
    assert graph_version(engine, corpus) == 4
    second = link(engine, corpus, chunk=3)  # Zorvick finds the older Zorvik itself
    assert (second.names_embedded, second.entities_linked, second.synonym_edges_added) == (3, 3, 1)
    assert graph_version(engine, corpus) == 5

    incremental = load_graph_edges(engine, corpus)
    assert incremental.version == 5
    assert replace(incremental, version=0) == replace(full, version=0)
    assert by_name(incremental, ids(engine, corpus)) == by_name(full, built)


def test_an_interrupted_linking_step_resumes(engine: Engine, built: Built) -> None:
    full = load_graph_edges(engine, built.corpus)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    corpus = ensure_corpus(engine, "a", "test")
    write(engine, corpus, [1, 2, 3, 4])
    with pytest.raises(RuntimeError, match="embedder down"):
        link(engine, corpus, chunk=3, fail_on=2)  # the first chunk of 3 commits, then it fails
    with transaction(engine) as session:
        linked = session.execute(select(Entity.id).where(Entity.synonyms_linked)).scalars()
        assert sorted(linked) == [1, 2, 3]
    assert graph_version(engine, corpus) == 2
    rest = link(engine, corpus, chunk=3)
    assert (rest.names_embedded, rest.entities_linked, rest.synonym_edges_added) == (4, 4, 1)
    assert replace(load_graph_edges(engine, corpus), version=0) == replace(full, version=0)


def test_neighbour_searches_use_the_hnsw_indexes(engine: Engine, built: Built) -> None:
    with transaction(engine) as session:
        # Seven-row tables would be scanned and sorted; forbid that so the HNSW path is tested.
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            session.execute(text(f"SET LOCAL {setting} = off"))

        def plan(statement: Any, params: dict[str, Any]) -> str:
            explain = text("EXPLAIN " + str(statement)).bindparams(*statement._bindparams.values())
            return "\n".join(session.execute(explain, params).scalars())

        top = plan(TOP_PROPOSITIONS, {"q": Q, "corpus": built.corpus, "k": 3})
        assert "ix_propositions_embedding_hnsw" in top
        params = {"corpus": built.corpus, "ids": [1], "neighbours": 20, "threshold": 0.8}
        assert "ix_entities_name_embedding_hnsw" in plan(LINK_SYNONYMS, params)


def test_the_synonym_search_takes_the_hnsw_index_without_statistics(
    engine: Engine, built: Built
) -> None:
    # Right after a load the planner has no statistics of the new names (they are stored by the
    # linking transaction itself) and would sort every entity per search; the linker's own
    # settings, and nothing else, must keep it on the index.
    with transaction(engine) as session:
        use_hnsw_for_synonyms(session)
        params = {"corpus": built.corpus, "ids": [1], "neighbours": 20, "threshold": 0.8}
        explain = text("EXPLAIN " + str(LINK_SYNONYMS)).bindparams(
            *LINK_SYNONYMS._bindparams.values()
        )
        plan = "\n".join(session.execute(explain, params).scalars())
    assert "ix_entities_name_embedding_hnsw" in plan
