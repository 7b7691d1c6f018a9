"""Corpora and passages: create a name space, add passages idempotently, report counts."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import (
    ColumnElement,
    Engine,
    Select,
    String,
    and_,
    any_,
    bindparam,
    delete,
    func,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.orm import Session

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
from store.postings import add_passage_postings, remove_corpus_postings


class CorpusNotFound(StoreError):
    """No corpus of that name exists in this database."""


@dataclass(frozen=True)
class PassageRow:
    """A stored passage as the indexer sees it."""

    id: int
    title: str
    text: str
    status: str
    #: Whether this call inserted it (False: it was stored before, or is a duplicate input).
    added: bool = False


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


def content_hash(title: str, text: str) -> str:
    """The key that makes re-indexing the same passage a no-op."""
    # surrogatepass: a lone surrogate (valid in JSON, not in UTF-8) still hashes, so the
    # passage that holds it can be stored and reported instead of stopping the whole file.
    return hashlib.sha256(f"{title}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


#: A code point PostgreSQL text cannot hold, and what stands for it in the stored copy.
NUL = "\x00"
REPLACEMENT = "\ufffd"
#: Lone UTF-16 surrogates: JSON may hold them ("\\ud800"), UTF-8 and PostgreSQL cannot.
SURROGATE = re.compile("[\ud800-\udfff]")


def unstorable_reason(title: str, text: str) -> str | None:
    """Why PostgreSQL cannot store this passage as given (NUL, lone surrogate), or None."""
    for part, value in (("title", title), ("text", text)):
        if NUL in value:
            return (
                f"the {part} holds a NUL character (U+0000) at offset {value.index(NUL)}; "
                "remove it from the file"
            )
        if found := SURROGATE.search(value):
            return (
                f"the {part} holds a lone surrogate (U+{ord(found.group()):04X}) at offset "
                f"{found.start()}, which is not text; fix the file's encoding"
            )
    return None


def storable(value: str) -> str:
    """`value` with NUL characters and lone surrogates replaced by U+FFFD, so it can be stored."""
    return SURROGATE.sub(REPLACEMENT, value.replace(NUL, REPLACEMENT))


def ensure_corpus(engine: Engine, name: str, embedder: str) -> int:
    """Return the id of corpus `name`, creating it; refuse to mix embedders in one corpus."""
    with transaction(engine) as session:
        session.execute(
            insert(Corpus)
            .values(name=name, embedder=embedder)
            .on_conflict_do_nothing(index_elements=["name"])
        )
        corpus = session.execute(select(Corpus).where(Corpus.name == name)).scalar_one()
        if corpus.embedder not in (None, embedder):
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


#: Rows per INSERT: PostgreSQL's protocol allows at most 65,535 parameters in one statement.
INSERT_CHUNK = 2000


def _hash_filter(corpus: int, hashes: Sequence[str]) -> ColumnElement[bool]:
    # One array parameter instead of one per hash, so a 100k-passage corpus fits one statement.
    wanted = bindparam("hashes", value=list(set(hashes)), type_=ARRAY(String(64)))
    return and_(Passage.corpus_id == corpus, Passage.content_hash == any_(wanted))


def add_passages(
    engine: Engine, corpus: int, passages: Sequence[tuple[str, str]], source: str | None = None
) -> list[PassageRow]:
    """Insert passages not yet in the corpus and return every given passage's row, in order.

    New passages' BM25 postings are written in the same transaction. Duplicates (same title and
    text) inside the input or already stored map to one row. With a `source`, every given passage
    is recorded as held by it (see store.deletion.prune_source).
    A passage PostgreSQL cannot hold as given (see `unstorable_reason`) is stored with the
    offending characters replaced, under the hash of what was given.
    """
    hashes = [content_hash(title, text) for title, text in passages]
    with transaction(engine) as session:
        existing = set(
            session.execute(
                select(Passage.content_hash).where(_hash_filter(corpus, hashes))
            ).scalars()
        )
        base = session.execute(
            select(func.coalesce(func.max(Passage.position), -1)).where(Passage.corpus_id == corpus)
        ).scalar_one()
        fresh: dict[str, dict[str, object]] = {}
        for (title, text), digest in zip(passages, hashes, strict=True):
            if digest not in existing and digest not in fresh:
                fresh[digest] = {
                    "corpus_id": corpus,
                    # The key is the given text; the stored copy is one PostgreSQL can hold.
                    "title": storable(title),
                    "text": storable(text),
                    "content_hash": digest,
                    "position": base + 1 + len(fresh),
                }
        values = list(fresh.values())
        lexemes: list[int] = []
        inserted: set[str] = set()
        inserted_ids: list[int] = []
        for start in range(0, len(values), INSERT_CHUNK):
            for digest, passage, n_lexemes in session.execute(
                insert(Passage)
                .values(values[start : start + INSERT_CHUNK])
                .on_conflict_do_nothing(constraint="uq_passages_corpus_hash")
                .returning(Passage.content_hash, Passage.id, Passage.n_lexemes)
            ):
                inserted.add(digest)
                inserted_ids.append(passage)
                lexemes.append(n_lexemes)
        add_passage_postings(session, corpus, inserted_ids)
        if lexemes:
            session.execute(
                update(Corpus)
                .where(Corpus.id == corpus)
                .values(
                    n_passages=Corpus.n_passages + len(lexemes),
                    n_passage_lexemes=Corpus.n_passage_lexemes + sum(lexemes),
                )
            )
        rows = session.execute(
            select(
                Passage.content_hash, Passage.id, Passage.title, Passage.text, Passage.status
            ).where(_hash_filter(corpus, hashes))
        ).all()
        if source is not None:
            _link_source(session, corpus, source, sorted({row[1] for row in rows}))
    by_hash = {row[0]: PassageRow(row[1], row[2], row[3], row[4]) for row in rows}
    first = {digest: index for index, digest in reversed(list(enumerate(hashes)))}
    return [
        replace(by_hash[digest], added=digest in inserted and first[digest] == index)
        for index, digest in enumerate(hashes)
    ]


# One array parameter for all the ids: a 100k-passage file is one short statement.
LINK_SOURCE = text("""
INSERT INTO passage_sources (corpus_id, passage_id, source)
SELECT :corpus, id, :source FROM unnest(CAST(:ids AS bigint[])) AS given(id)
ON CONFLICT DO NOTHING
""")


def _link_source(session: Session, corpus: int, source: str, ids: Sequence[int]) -> None:
    session.execute(LINK_SOURCE, {"corpus": corpus, "source": source, "ids": list(ids)})


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
        deleted = session.execute(
            delete(Corpus).where(Corpus.name == name).returning(Corpus.id)
        ).scalar()
        if deleted is not None:
            remove_corpus_postings(session, deleted)  # the only rows no foreign key cascades to
    return deleted is not None


def database_size_bytes(engine: Engine) -> int:
    """Size of the current database on disk, for the indexing benchmark's storage cost."""
    with transaction(engine) as session:
        return int(
            session.execute(select(func.pg_database_size(func.current_database()))).scalar_one()
        )
