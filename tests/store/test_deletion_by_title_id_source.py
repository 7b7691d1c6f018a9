"""Deleting by title, id or source leaves the corpus equal to a fresh index of the rest."""

from __future__ import annotations

from sqlalchemy import Engine

from nodes.retrieval.corpus_graph import corpus_graph
from store.corpora import corpus_id
from store.deletion import delete_passage_id, delete_passages, delete_titled, prune_source
from store.entity_graph import graph_version
from tests.store.corpus_snapshot import (
    ALPHA,
    BETA,
    GAMMA,
    assert_consistent,
    fresh,
    index,
    passage_ids,
    posted_lexemes,
    snapshot,
    sources,
)


async def test_delete_by_title_equals_a_fresh_index_of_the_rest(
    engine: Engine, database_url: str
) -> None:
    await index(engine, database_url, "c", [ALPHA, BETA, GAMMA])
    cid = corpus_id(engine, "c")
    before = corpus_graph(engine, cid)
    paris_doha = (("doha", "thing"), ("paris", "thing"), 1.0)
    assert snapshot(engine, "c")["synonyms"] == [paris_doha]
    assert posted_lexemes(engine, "c") >= {"cold", "host"}  # Beta: "cold"; Alpha: "hosts"

    report = delete_titled(engine, cid, "Beta")
    # Beta's two units go; Rome (still in Alpha) and Oslo (still in Gamma) stay: no entity left.
    assert (report.passages, report.propositions, report.entities) == (1, 2, 0)
    assert report.titles == ("Beta",)
    assert snapshot(engine, "c") == await fresh(engine, database_url, "f", [ALPHA, GAMMA])
    assert snapshot(engine, "c")["synonyms"] == [paris_doha]
    assert "cold" not in posted_lexemes(engine, "c")  # only Beta said it
    assert "host" in posted_lexemes(engine, "c")
    assert_consistent(engine, "c")

    report = delete_titled(engine, cid, "Gamma")
    assert (report.passages, report.propositions, report.entities) == (1, 1, 2)  # Oslo, Doha
    assert snapshot(engine, "c") == await fresh(engine, database_url, "g", [ALPHA])
    assert snapshot(engine, "c")["synonyms"] == []  # went with Doha
    assert_consistent(engine, "c")

    after = corpus_graph(engine, cid)  # the cached entity graph is rebuilt, not reused
    assert after.version > before.version
    assert (after.graph.n_entities, after.graph.n_nodes) == (3, 4)  # Paris, Seine, Rome; Alpha
    assert (before.graph.n_entities, before.graph.n_nodes) == (5, 8)

    assert not delete_titled(engine, cid, "Beta").matched  # already gone: nothing to do


async def test_delete_by_id_only_inside_its_corpus(engine: Engine, database_url: str) -> None:
    await index(engine, database_url, "c", [ALPHA, BETA])
    await index(engine, database_url, "other", [ALPHA, BETA, GAMMA])
    other = snapshot(engine, "other")
    cid, other_id = corpus_id(engine, "c"), corpus_id(engine, "other")
    version = graph_version(engine, other_id)
    (foreign,) = passage_ids(engine, "other", "Alpha")

    assert not delete_passage_id(engine, cid, foreign).matched  # another corpus's id: refused
    assert not delete_passages(engine, cid, [foreign]).matched
    (alpha,) = passage_ids(engine, "c", "Alpha")
    report = delete_passage_id(engine, cid, alpha)
    # Alpha's Paris and Seine go with it; Rome stays (Beta mentions it).
    assert (report.passages, report.propositions, report.entities) == (1, 2, 2)
    assert snapshot(engine, "c") == await fresh(engine, database_url, "f", [BETA])
    assert snapshot(engine, "other") == other
    assert graph_version(engine, other_id) == version
    assert_consistent(engine, "c")
    assert_consistent(engine, "other")


async def test_delete_by_source_keeps_what_another_source_holds(
    engine: Engine, database_url: str
) -> None:
    await index(engine, database_url, "c", [ALPHA, BETA], source="/docs/one.json")
    await index(engine, database_url, "c", [BETA, GAMMA], source="/docs/two.json")
    lone = ("Delta", "Lima sleeps.")
    await index(engine, database_url, "c", [lone])  # no source: never touched by a source
    cid = corpus_id(engine, "c")

    report = prune_source(engine, cid, "/docs/one.json")
    assert (report.passages, report.released, report.titles) == (1, 1, ("Alpha",))
    assert snapshot(engine, "c") == await fresh(engine, database_url, "f", [BETA, GAMMA, lone])
    assert sources(engine, "c") == {("/docs/two.json", *BETA), ("/docs/two.json", *GAMMA)}
    assert not prune_source(engine, cid, "/docs/one.json").matched

    report = prune_source(engine, cid, "/docs/two.json")
    assert (report.passages, report.released) == (2, 0)
    assert snapshot(engine, "c") == await fresh(engine, database_url, "g", [lone])
    assert_consistent(engine, "c")
