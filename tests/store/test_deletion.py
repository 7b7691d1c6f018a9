"""Deleting passages by title, id and source leaves the corpus equal to a fresh index of the rest.

Corpora are built by the real index graph with the synthetic extractor (sentences as units,
capitalised words as entities) and the hashing embedder, so every run is fast and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import aliased

from graphs.indexing.context import IndexContext
from graphs.indexing.graph import build_index_graph
from graphs.indexing.state import IndexState
from graphs.models.scripted_model import ScriptedChatModel
from nodes.retrieval.corpus_graph import corpus_graph
from store.corpora import corpus_id, delete_corpus
from store.deletion import delete_passage_id, delete_passages, delete_titled, prune_source
from store.engine import transaction
from store.entity_graph import graph_version
from store.failures import record_failure
from store.graph_writes import (
    ExtractedEntity,
    ExtractedPassage,
    set_passage_embeddings,
    write_extracted,
)
from store.integrity import integrity_problems
from store.models import (
    Corpus,
    Entity,
    EntityCooccurrence,
    EntityPassage,
    EntityProposition,
    EntitySynonym,
    ExtractionFailure,
    Passage,
    PassageSource,
    Proposition,
)
from store.passage_writes import add_passages
from store.posting_models import PassagePosting, PropositionPosting
from tests.graph.test_index_graph import services

Doc = tuple[str, str]

ALPHA = ("Alpha", "Paris lies on the Seine. Paris hosts Rome fans.")
BETA = ("Beta", "Rome is old. Oslo is cold.")
# The hashing embedder gives "Paris" and "Doha" the same vector: one synonymy edge.
GAMMA = ("Gamma", "Oslo meets Doha at dawn.")


async def index(
    engine: Engine,
    url: str,
    corpus: str,
    docs: Sequence[Doc] | None,
    source: str | None = None,
    **state: Any,
) -> dict[str, Any]:
    """Index `docs` (or the state's `source_path`) into `corpus`, recorded under `source`."""
    graph = build_index_graph(services(engine, url, ScriptedChatModel(rules=[])))
    given: IndexState = {"corpus": corpus, **state}  # type: ignore[typeddict-item]
    if docs is not None:
        given["passages"] = [{"title": t, "text": x} for t, x in docs]
    if source is not None:
        given["source"] = source
    result = await graph.ainvoke(given, context=IndexContext(extractor="synthetic"))
    return dict(result["summary"])


def _vector(value: Any) -> tuple[float, ...]:
    return tuple(np.round(np.asarray(value, dtype=np.float64), 5).tolist())


def snapshot(engine: Engine, corpus: str) -> dict[str, Any]:
    """The corpus by content (ids differ between indexes): rows, edges, vectors, stored degrees,
    BM25 postings and counters.

    Edge pairs are stored (smaller id, larger id), so their ends are sorted by content here.
    """
    cid = corpus_id(engine, corpus)
    with transaction(engine) as session:
        passages = {
            row.id: (row.title, row.text)
            for row in session.execute(
                select(Passage.id, Passage.title, Passage.text).where(Passage.corpus_id == cid)
            )
        }
        units = {
            row.id: (*passages[row.passage_id], row.position)
            for row in session.execute(
                select(Proposition.id, Proposition.passage_id, Proposition.position).where(
                    Proposition.corpus_id == cid
                )
            )
        }
        entities = {
            row.id: (row.canonical_name, row.type)
            for row in session.execute(
                select(Entity.id, Entity.canonical_name, Entity.type).where(Entity.corpus_id == cid)
            )
        }
        corpus_row = session.execute(select(Corpus).where(Corpus.id == cid)).scalar_one()
        unit_edges = session.execute(
            select(EntityProposition.entity_id, EntityProposition.proposition_id)
            .join(Entity, Entity.id == EntityProposition.entity_id)
            .where(Entity.corpus_id == cid)
        ).all()
        return {
            "passages": sorted(
                (r.title, r.text, r.status, r.embedding is not None, r.n_lexemes)
                for r in session.execute(select(Passage).where(Passage.corpus_id == cid)).scalars()
            ),
            "units": sorted(
                (units[r.id], r.text, _vector(r.embedding), r.n_lexemes)
                for r in session.execute(
                    select(Proposition).where(Proposition.corpus_id == cid)
                ).scalars()
            ),
            "entities": sorted(
                (
                    r.name,
                    r.canonical_name,
                    r.type,
                    _vector(r.name_embedding),
                    r.synonyms_linked,
                    r.degree,
                )
                for r in session.execute(select(Entity).where(Entity.corpus_id == cid)).scalars()
            ),
            "unit_edges": sorted((entities[e], units[u]) for e, u in unit_edges),
            "cooccurrence": sorted(
                (*sorted((entities[r.entity_a], entities[r.entity_b])), units[r.proposition_id])
                for r in session.execute(
                    select(EntityCooccurrence).where(EntityCooccurrence.corpus_id == cid)
                ).scalars()
            ),
            "containment": sorted(
                (entities[r.entity_id], passages[r.passage_id], r.n_units)
                for r in session.execute(
                    select(EntityPassage).where(EntityPassage.corpus_id == cid)
                ).scalars()
            ),
            "synonyms": sorted(
                (*sorted((entities[r.entity_a], entities[r.entity_b])), round(r.similarity, 5))
                for r in session.execute(
                    select(EntitySynonym).where(EntitySynonym.corpus_id == cid)
                ).scalars()
            ),
            # BM25's postings by content: a fresh index must post exactly the same lexemes.
            "unit_postings": sorted(
                (units[r.proposition_id], r.lexeme, r.tf, r.n_lexemes)
                for r in session.execute(
                    select(PropositionPosting).where(PropositionPosting.corpus_id == cid)
                ).scalars()
            ),
            "passage_postings": sorted(
                (passages[r.passage_id], r.lexeme, r.tf, r.n_lexemes)
                for r in session.execute(
                    select(PassagePosting).where(PassagePosting.corpus_id == cid)
                ).scalars()
            ),
            "bm25_counters": (
                corpus_row.n_passages,
                corpus_row.n_passage_lexemes,
                corpus_row.n_propositions,
                corpus_row.n_proposition_lexemes,
            ),
        }


def sources(engine: Engine, corpus: str) -> set[tuple[str, str, str]]:
    """(source, title, text) of every recorded source link of the corpus."""
    cid = corpus_id(engine, corpus)
    held = aliased(Passage)
    with transaction(engine) as session:
        rows = session.execute(
            select(PassageSource.source, held.title, held.text)
            .join(held, held.id == PassageSource.passage_id)
            .where(PassageSource.corpus_id == cid)
        ).all()
    return {(r[0], r[1], r[2]) for r in rows}


def posted_lexemes(engine: Engine, corpus: str) -> set[str]:
    """Every lexeme the corpus's units and passages are posted under."""
    found = snapshot(engine, corpus)
    return {row[1] for row in found["unit_postings"] + found["passage_postings"]}


def assert_consistent(engine: Engine, corpus: str) -> None:
    problems = integrity_problems(engine, corpus_id(engine, corpus))
    assert problems and not any(problems.values()), problems


async def fresh(engine: Engine, url: str, name: str, docs: Sequence[Doc]) -> dict[str, Any]:
    """The snapshot of a new corpus holding exactly `docs`."""
    await index(engine, url, name, docs)
    return snapshot(engine, name)


def passage_ids(engine: Engine, corpus: str, title: str) -> list[int]:
    cid = corpus_id(engine, corpus)
    with transaction(engine) as session:
        return list(
            session.execute(
                select(Passage.id).where(Passage.corpus_id == cid, Passage.title == title)
            ).scalars()
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


async def test_an_indexer_never_writes_a_passage_deleted_while_it_worked(
    engine: Engine, database_url: str
) -> None:
    await index(engine, database_url, "c", [ALPHA])
    cid = corpus_id(engine, "c")
    (alpha,) = passage_ids(engine, "c", "Alpha")
    (beta,) = add_passages(engine, cid, [BETA])
    delete_passages(engine, cid, [alpha])
    set_passage_embeddings(engine, [alpha, beta.id], np.ones((2, 384), np.float32) / np.sqrt(384))
    assert snapshot(engine, "c")["passages"] == [(*BETA, "pending", True, 5)]
    delete_passages(engine, cid, [beta.id])
    late = ExtractedPassage(
        alpha,
        ["Paris lies on the Seine."],
        np.ones((1, 384), np.float32) / np.sqrt(384),
        [ExtractedEntity("Paris", "thing", (0,))],
    )
    assert write_extracted(engine, cid, [late]).passages == 0
    record_failure(engine, cid, alpha, "too late", None)
    with transaction(engine) as session:
        assert session.execute(select(ExtractionFailure)).first() is None
        assert session.execute(select(Proposition)).first() is None
    assert snapshot(engine, "c")["bm25_counters"] == (0, 0, 0, 0)
    assert_consistent(engine, "c")


async def test_an_entity_without_units_is_never_created(engine: Engine, database_url: str) -> None:
    await index(engine, database_url, "c", [GAMMA])
    cid = corpus_id(engine, "c")
    (row,) = add_passages(engine, cid, [("Zeta", "Nothing here.")])
    item = ExtractedPassage(
        row.id,
        ["Nothing here."],
        np.ones((1, 384), np.float32) / np.sqrt(384),
        [ExtractedEntity("Ghost", "thing", (7,))],  # points past the passage's one unit
    )
    assert write_extracted(engine, cid, [item]).entities_new == 0
    assert "ghost" not in {e[1] for e in snapshot(engine, "c")["entities"]}
    assert_consistent(engine, "c")


# Derived edges whose entity, unit or passage no longer exists (no foreign key forbids them).
DANGLING_EDGES = {
    "entity–unit": """
        SELECT count(*) FROM entity_propositions ep
        LEFT JOIN entities e ON e.id = ep.entity_id
        LEFT JOIN propositions u ON u.id = ep.proposition_id
        WHERE e.id IS NULL OR u.id IS NULL
    """,
    "co-occurrence": """
        SELECT count(*) FROM entity_cooccurrences c
        LEFT JOIN entities a ON a.id = c.entity_a
        LEFT JOIN entities b ON b.id = c.entity_b
        LEFT JOIN propositions u ON u.id = c.proposition_id
        WHERE a.id IS NULL OR b.id IS NULL OR u.id IS NULL
    """,
    "containment": """
        SELECT count(*) FROM entity_passages c
        LEFT JOIN entities e ON e.id = c.entity_id
        LEFT JOIN passages p ON p.id = c.passage_id
        WHERE e.id IS NULL OR p.id IS NULL
    """,
}


def dangling_edges(engine: Engine) -> dict[str, int]:
    with transaction(engine) as session:
        return {
            name: session.execute(text(sql)).scalar_one() for name, sql in DANGLING_EDGES.items()
        }


async def test_deletions_leave_no_derived_edge_behind(engine: Engine, database_url: str) -> None:
    await index(engine, database_url, "gone", [ALPHA, BETA, GAMMA])
    await index(engine, database_url, "kept", [ALPHA, BETA, GAMMA])
    kept = snapshot(engine, "kept")
    assert kept["unit_edges"] and kept["cooccurrence"] and kept["containment"]  # all to lose
    gone = corpus_id(engine, "gone")

    assert delete_titled(engine, gone, "Alpha").passages == 1
    assert dangling_edges(engine) == dict.fromkeys(DANGLING_EDGES, 0)
    assert delete_corpus(engine, "gone")
    assert dangling_edges(engine) == dict.fromkeys(DANGLING_EDGES, 0)
    with transaction(engine) as session:
        for table in ("entity_cooccurrences", "entity_passages"):
            left = text(f"SELECT count(*) FROM {table} WHERE corpus_id = :c")
            assert session.execute(left, {"c": gone}).scalar_one() == 0
    assert snapshot(engine, "kept") == kept  # the other corpus keeps every edge
    assert_consistent(engine, "kept")
