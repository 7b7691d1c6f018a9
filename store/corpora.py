"""Corpora: create a name space, look it up, report counts, list and delete it."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, Select, delete, func, select
from sqlalchemy.dialects.postgresql import insert

from store.corpus_lock import lock_corpus
from store.derived_edges import remove_corpus_edges
from store.engine import StoreError, transaction
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
from store.postings import remove_corpus_postings
from store.vector_spaces import vectors_match


class CorpusNotFound(StoreError):
    """No corpus of that name exists in this database."""


@dataclass(frozen=True)
class CorpusStats:
    """Counts of one corpus, for the index summary and the benchmark header."""

    name: str
    passages: int
    passages_done: int
    passages_failed: int
    passages_pending: int
    propositions: int
    entities: int
    edges: int
    failures: int
    synonym_edges: int
    cooccurrence_edges: int
    cooccurrence_units: int
    containment_rows: int


#: Unicode categories that change what a terminal shows: controls (newline, ESC), format
#: characters (bidi overrides) and line or paragraph separators.
CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def is_control(char: str) -> bool:
    """Whether a character would act on a terminal rather than be shown."""
    return unicodedata.category(char) in CONTROL_CATEGORIES


#: The longest corpus name a new corpus may have.
MAX_CORPUS_NAME_CHARS = 200


class InvalidCorpusName(ValueError):
    """A name no new corpus may have (bad input: the server passes the message on)."""


def check_corpus_name(name: str) -> None:
    """Refuse an empty name, an over-long one, and one holding control or format characters.

    Names are shown literally (never as markup), but a newline, an ANSI escape or a bidi
    override would still change what a terminal shows, so such names are refused at creation.
    """
    if not name.strip():
        raise InvalidCorpusName("a corpus needs a name, got an empty one")
    if len(name) > MAX_CORPUS_NAME_CHARS:
        raise InvalidCorpusName(f"a corpus name has at most {MAX_CORPUS_NAME_CHARS} characters")
    for offset, char in enumerate(name):
        if is_control(char):
            raise InvalidCorpusName(
                f"a corpus name cannot hold control characters; {name!r} has "
                f"U+{ord(char):04X} at offset {offset}"
            )


def ensure_corpus(engine: Engine, name: str, embedder: str) -> int:
    """Return the id of corpus `name`, creating it; refuse to mix embedders in one corpus.

    Embedders that make the same vectors (`store.vector_spaces`) may index into one corpus; it
    keeps the name it was created with.

    A new corpus's name must pass `check_corpus_name`; existing corpora are found by any name.
    """
    with transaction(engine) as session:
        existing = session.execute(select(Corpus.id).where(Corpus.name == name)).first()
        if existing is None:
            check_corpus_name(name)
        session.execute(
            insert(Corpus)
            .values(name=name, embedder=embedder)
            .on_conflict_do_nothing(index_elements=["name"])
        )
        corpus = session.execute(select(Corpus).where(Corpus.name == name)).scalar_one()
        if not vectors_match(corpus.embedder, embedder):
            raise StoreError(
                f"corpus {name!r} was indexed with embedder {corpus.embedder!r}, not {embedder!r}; "
                "vectors of different models cannot be compared — use another corpus name"
            )
        return corpus.id


def corpus_id(engine: Engine, name: str) -> int:
    """Return the id of an existing corpus or raise CorpusNotFound."""
    with transaction(engine) as session:
        found = session.execute(select(Corpus.id).where(Corpus.name == name)).scalar()
    if found is None:
        raise CorpusNotFound(
            f"no corpus named {name!r}; index one with `grasp index PATH --corpus {name}`"
        )
    return int(found)


def corpus_embedder(engine: Engine, corpus: int) -> str | None:
    """The embedder a corpus was indexed with, so its questions are embedded by the same model."""
    with transaction(engine) as session:
        return session.get_one(Corpus, corpus).embedder


def other_embedder(engine: Engine, corpus: int, embedder: str) -> str | None:
    """The embedder corpus `corpus` was indexed with when its vectors are not `embedder`'s, else None."""
    recorded = corpus_embedder(engine, corpus)
    return None if vectors_match(recorded, embedder) else recorded


def corpus_stats(engine: Engine, name: str) -> CorpusStats:
    """Count all of one corpus: passages by status, units, entities, edges, failures, graph layer."""
    corpus = corpus_id(engine, name)
    with transaction(engine) as session:
        status_counts = dict(
            session.execute(
                select(Passage.status, func.count())
                .where(Passage.corpus_id == corpus)
                .group_by(Passage.status)
            ).all()
        )

        def count(statement: Select[int]) -> int:
            return int(session.execute(statement).scalar_one())

        propositions = count(
            select(func.count()).select_from(Proposition).where(Proposition.corpus_id == corpus)
        )
        entities = count(select(func.count()).select_from(Entity).where(Entity.corpus_id == corpus))
        edges = count(
            select(func.count())
            .select_from(EntityProposition)
            .join(Entity, Entity.id == EntityProposition.entity_id)
            .where(Entity.corpus_id == corpus)
        )
        failures = count(
            select(func.count())
            .select_from(ExtractionFailure)
            .where(ExtractionFailure.corpus_id == corpus)
        )
        synonym_edges = count(
            select(func.count()).select_from(EntitySynonym).where(EntitySynonym.corpus_id == corpus)
        )
        pairs = (
            select(EntityCooccurrence.entity_a, EntityCooccurrence.entity_b)
            .where(EntityCooccurrence.corpus_id == corpus)
            .distinct()
            .subquery()
        )
        cooccurrence_edges = count(select(func.count()).select_from(pairs))
        cooccurrence_units = count(
            select(func.count())
            .select_from(EntityCooccurrence)
            .where(EntityCooccurrence.corpus_id == corpus)
        )
        containment_rows = count(
            select(func.count()).select_from(EntityPassage).where(EntityPassage.corpus_id == corpus)
        )
    return CorpusStats(
        name=name,
        passages=sum(status_counts.values()),
        passages_done=status_counts.get("done", 0),
        passages_failed=status_counts.get("failed", 0),
        passages_pending=status_counts.get("pending", 0),
        propositions=propositions,
        entities=entities,
        edges=edges,
        failures=failures,
        synonym_edges=synonym_edges,
        cooccurrence_edges=cooccurrence_edges,
        cooccurrence_units=cooccurrence_units,
        containment_rows=containment_rows,
    )


@dataclass(frozen=True)
class CorpusListing:
    """One line of `grasp corpus list`."""

    name: str
    embedder: str | None
    passages: int
    propositions: int
    entities: int
    sources: int
    created_at: datetime


def list_corpora(engine: Engine) -> list[CorpusListing]:
    """Every corpus of the database by name, with its size (from the exact counters)."""
    entities = (
        select(func.count())
        .select_from(Entity)
        .where(Entity.corpus_id == Corpus.id)
        .scalar_subquery()
    )
    sources = (
        select(func.count(PassageSource.source.distinct()))
        .where(PassageSource.corpus_id == Corpus.id)
        .scalar_subquery()
    )
    with transaction(engine) as session:
        rows = session.execute(
            select(
                Corpus.name,
                Corpus.embedder,
                Corpus.n_passages,
                Corpus.n_propositions,
                entities,
                sources,
                Corpus.created_at,
            ).order_by(Corpus.name)
        ).all()
    return [
        CorpusListing(r[0], r[1], int(r[2]), int(r[3]), int(r[4]), int(r[5]), r[6]) for r in rows
    ]


def corpus_sources(engine: Engine, corpus: int) -> list[str]:
    """The sources (file or folder paths) the corpus holds passages of, sorted."""
    with transaction(engine) as session:
        return list(
            session.execute(
                select(PassageSource.source)
                .where(PassageSource.corpus_id == corpus)
                .distinct()
                .order_by(PassageSource.source)
            ).scalars()
        )


def delete_corpus(engine: Engine, name: str) -> bool:
    """Remove a corpus and everything in it; return whether it existed."""
    with transaction(engine) as session:
        found = session.execute(select(Corpus.id).where(Corpus.name == name)).scalar()
        if found is None:
            return False
        # The corpus's write lock first, as every writer takes it: a running index or deletion
        # finishes its transaction before the corpus goes (store/corpus_lock.py).
        lock_corpus(session, found)
        found = session.execute(
            select(Corpus.id).where(Corpus.id == found).with_for_update()
        ).scalar()
        if found is None:
            return False
        # The rows no foreign key cascades to: the derived edges (found through the corpus's
        # entities, so before they go) and the postings.
        remove_corpus_edges(session, found)
        remove_corpus_postings(session, found)
        session.execute(delete(Corpus).where(Corpus.id == found))
    return True


def database_size_bytes(engine: Engine) -> int:
    """Size of the current database on disk, for the indexing benchmark's storage cost."""
    with transaction(engine) as session:
        return int(
            session.execute(select(func.pg_database_size(func.current_database()))).scalar_one()
        )
