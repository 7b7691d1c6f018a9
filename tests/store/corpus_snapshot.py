"""Corpora indexed by the real index graph and compared by content: snapshots, sources, integrity.

Corpora are built by the real index graph with the synthetic extractor (sentences as units,
capitalised words as entities) and the hashing embedder, so every run is fast and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import Engine, select
from sqlalchemy.orm import aliased

from graphs.indexing.context import IndexContext
from graphs.indexing.graph import build_index_graph
from graphs.indexing.state import IndexState
from graphs.models.scripted_model import ScriptedChatModel
from store.corpora import corpus_id
from store.engine import transaction
from store.integrity import integrity_problems
from store.models import (
    Corpus,
    Entity,
    EntityCooccurrence,
    EntityPassage,
    EntityProposition,
    EntitySynonym,
    Passage,
    PassageSource,
    Proposition,
)
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
