"""Whole-corpus reads for evaluations and the retrieval benchmark, which index or sample one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Engine, bindparam, select

from store.engine import transaction
from store.models import Corpus, Entity, EntityProposition, Passage, Proposition
from store.passage_writes import content_hash
from store.retrieval import FloatVector, PassageText
from store.vector_bytes import vector_bytes, vector_from_bytes

CORPUS_PASSAGES = (
    select(Passage.id, Passage.title, Passage.text)
    .where(Passage.corpus_id == bindparam("corpus"))
    .order_by(Passage.id)
)


def corpus_passages(engine: Engine, corpus: int) -> list[PassageText]:
    """Every passage of a corpus in id order, so gold passages can be found by their text."""
    with transaction(engine) as session:
        rows = session.execute(CORPUS_PASSAGES, {"corpus": corpus}).all()
    return [PassageText(int(pid), title, text) for pid, title, text in rows]


HAS_PASSAGE = select(Passage.id).where(
    Passage.corpus_id == bindparam("corpus"), Passage.content_hash == bindparam("hash")
)


def has_passage(engine: Engine, corpus: int, title: str, text: str) -> bool:
    """Whether the corpus holds this passage, so a rebuild can tell its own corpus from another."""
    with transaction(engine) as session:
        found = session.execute(
            HAS_PASSAGE, {"corpus": corpus, "hash": content_hash(title, text)}
        ).first()
    return found is not None


PROPOSITION_COUNTER = select(Corpus.n_propositions).where(Corpus.id == bindparam("corpus"))


def proposition_counter(engine: Engine, corpus: int) -> int:
    """The corpus's proposition counter (BM25's N), a cheap check of how far a build got."""
    with transaction(engine) as session:
        return int(session.execute(PROPOSITION_COUNTER, {"corpus": corpus}).scalar_one())


PROPOSITION_IDS = (
    select(Proposition.id)
    .where(Proposition.corpus_id == bindparam("corpus"))
    .order_by(Proposition.id)
)


def proposition_ids(engine: Engine, corpus: int) -> list[int]:
    """Every proposition id of a corpus in ascending order, to sample benchmark queries from."""
    with transaction(engine) as session:
        return [int(pid) for pid in session.execute(PROPOSITION_IDS, {"corpus": corpus}).scalars()]


@dataclass(frozen=True)
class StoredProposition:
    """A proposition with its stored embedding, the seed of a synthetic query."""

    id: int
    text: str
    embedding: FloatVector


STORED_PROPOSITIONS = select(
    Proposition.id, Proposition.text, vector_bytes(Proposition.embedding, "embedding")
).where(Proposition.id.in_(bindparam("ids", expanding=True)))


def stored_propositions(engine: Engine, ids: Sequence[int]) -> list[StoredProposition]:
    """The given propositions with their embeddings, in the order of `ids` (unknown ids skipped)."""
    with transaction(engine) as session:
        rows = session.execute(STORED_PROPOSITIONS, {"ids": [int(i) for i in ids]}).all()
    by_id = {
        int(pid): StoredProposition(int(pid), text, vector_from_bytes(embedding))
        for pid, text, embedding in rows
    }
    return [by_id[i] for i in ids if i in by_id]


ENTITY_MENTIONS = (
    select(EntityProposition.proposition_id, Entity.name)
    .join(Entity, Entity.id == EntityProposition.entity_id)
    .where(Entity.corpus_id == bindparam("corpus"))
)


def entity_mentions(engine: Engine, corpus: int) -> list[tuple[int, str]]:
    """Every entity–proposition edge of a corpus as (proposition id, entity name), in scan order.

    One row per edge, so an entity is drawn as often as it occurs (the benchmark's keyword mix).
    """
    with transaction(engine) as session:
        rows = session.execute(ENTITY_MENTIONS, {"corpus": corpus}).all()
    return [(int(pid), name) for pid, name in rows]
