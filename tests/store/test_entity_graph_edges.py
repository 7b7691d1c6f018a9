"""Entity graph edges by hand: synonyms, co-occurrence, containment, isolation, linking in steps."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import Engine, select, text

from nodes.indexing.link_entities import LinkReport
from store.corpora import corpus_stats, ensure_corpus
from store.engine import transaction
from store.entity_graph import (
    entity_unit_cosines,
    graph_version,
    load_graph_edges,
    passage_cosines,
    relation_cosines,
    top_propositions,
)
from store.models import Entity
from tests.conftest import TABLES
from tests.store.entity_graph_corpus import NAMES, Built, Q, build, by_name, ids, link, write


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
