"""The index graph's linking step: the entity graph layer of the sample corpus, and no-op re-runs."""

import pytest
from sqlalchemy import Engine

from graphs.indexing.context import IndexContext
from graphs.models.scripted_model import ScriptedChatModel
from store.corpora import corpus_id
from store.entity_graph import graph_version, load_graph_edges
from tests.fixtures.indexing import BATCH
from tests.graph.test_index_graph import run, services


async def test_index_graph_builds_and_keeps_the_entity_graph_layer(
    engine: Engine, database_url: str
) -> None:
    model = ScriptedChatModel(rules=[BATCH])
    summary = await run(services(engine, database_url, model), "sample")
    # Entities: Sudhof, Eagleman, Deisseroth, optogenetics, Stanford University|university and
    # stanford university|school. Only the two Stanfords share name tokens (hashing embedder:
    # cosine 1.0), so they are the one synonymy edge.
    # Co-occurrence: Sudhof–Stanford (his 3rd unit), Eagleman–Stanford (his 2nd), and the three
    # pairs of Deisseroth's single unit. Containment: Sudhof 3 + Stanford 1, Eagleman 2 +
    # Stanford 1, and Deisseroth's three entities once each.
    assert summary["synonym_edges"] == 1
    assert (summary["cooccurrence_edges"], summary["cooccurrence_units"]) == (5, 5)
    assert summary["containment_rows"] == 7
    assert summary["this_run"]["names_embedded"] == 6
    assert summary["this_run"]["entities_linked"] == 6
    assert summary["this_run"]["synonym_edges_added"] == 1
    corpus = corpus_id(engine, "sample")
    version = graph_version(engine, corpus)
    assert version == 2  # one batch write, one linking chunk
    containment = {n for _, _, n in load_graph_edges(engine, corpus).containment}
    assert containment == {1, 2, 3}

    again = await run(services(engine, database_url, model), "sample")
    assert again["this_run"]["names_embedded"] == again["this_run"]["entities_linked"] == 0
    assert graph_version(engine, corpus) == version  # nothing changed, nothing bumped
    assert again["synonym_edges"] == 1


async def test_stats_prints_the_graph_layer_counts(
    engine: Engine,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await run(services(engine, database_url, ScriptedChatModel(rules=[BATCH])), "sample")
    monkeypatch.setenv("DATABASE_URL", database_url)
    from graphs.cli.main import main

    assert main(["stats", "--corpus", "sample"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any("synonymy edges" in line and " 1 " in line for line in lines)
    assert any("5 entity pairs over 5 units" in line for line in lines)
    assert any("entity–passage containment" in line and " 7 " in line for line in lines)


def test_the_synonym_threshold_must_be_a_cosine() -> None:
    assert IndexContext(synonym_threshold=0.9).synonym_threshold == 0.9
    with pytest.raises(ValueError, match="synonym_threshold"):
        IndexContext(synonym_threshold=1.5)
