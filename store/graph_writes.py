"""Write extracted propositions, resolved entities and their edges for a batch of passages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from pgvector.sqlalchemy import Vector
from sqlalchemy import Engine, bindparam, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from store.engine import transaction
from store.entities import (
    DEFAULT_TYPE_THRESHOLD,
    EntityCandidate,
    canonical_name,
    choose_match,
)
from store.models import (
    EMBEDDING_DIM,
    Corpus,
    Entity,
    EntityProposition,
    Passage,
    Proposition,
)
from store.postings import add_unit_postings

FloatVector = npt.NDArray[np.float32]

#: First key of the advisory lock that serialises entity resolution per corpus.
ENTITY_LOCK_KEY = 7_140_512
#: Held to the end of the transaction; the second key is the corpus.
ENTITY_LOCK = text("SELECT pg_advisory_xact_lock(:key, :corpus)")

# The entity graph layer of a batch's passages, derived from the entity–unit edges just written:
# every pair of entities sharing a unit (the unit is the relation's text) and, per entity and
# passage, how many of the passage's units link it. A passage is written once (the done check runs
# under the lock), so a conflict can only come from a repeated run and is safely skipped.
INSERT_COOCCURRENCES = text("""
INSERT INTO entity_cooccurrences (corpus_id, entity_a, entity_b, proposition_id)
SELECT p.corpus_id, a.entity_id, b.entity_id, p.id
FROM propositions p
JOIN entity_propositions a ON a.proposition_id = p.id
JOIN entity_propositions b ON b.proposition_id = p.id AND a.entity_id < b.entity_id
WHERE p.corpus_id = :corpus AND p.passage_id = ANY(:passages)
ON CONFLICT DO NOTHING
""")
INSERT_CONTAINMENT = text("""
INSERT INTO entity_passages (corpus_id, entity_id, passage_id, n_units)
SELECT p.corpus_id, ep.entity_id, p.passage_id, count(*)
FROM propositions p
JOIN entity_propositions ep ON ep.proposition_id = p.id
WHERE p.corpus_id = :corpus AND p.passage_id = ANY(:passages)
GROUP BY p.corpus_id, ep.entity_id, p.passage_id
ON CONFLICT DO NOTHING
""")


@dataclass(frozen=True)
class ExtractedEntity:
    """A typed entity mention with the indices of the passage's propositions it occurs in."""

    name: str
    type: str
    proposition_indices: tuple[int, ...]
    type_embedding: FloatVector | None = None


@dataclass(frozen=True)
class ExtractedPassage:
    """Everything the extractor produced for one passage, embeddings included."""

    passage_id: int
    propositions: Sequence[str]
    embeddings: FloatVector
    entities: Sequence[ExtractedEntity] = field(default_factory=tuple)


@dataclass
class WriteCounts:
    """What one write added, for the indexer's progress and summary."""

    passages: int = 0
    propositions: int = 0
    entities_new: int = 0
    entities_merged: int = 0
    edges: int = 0


def write_extracted(
    engine: Engine,
    corpus: int,
    items: Sequence[ExtractedPassage],
    type_threshold: float = DEFAULT_TYPE_THRESHOLD,
) -> WriteCounts:
    """Store a batch in one transaction; passages done or deleted meanwhile are skipped.

    Passages another run finished, or that were deleted while this batch extracted them, are left
    alone. Entity resolution holds a per-corpus advisory lock so concurrent batches never create the same
    entity twice; extraction itself (the slow part) runs outside it. The batch's co-occurrence and
    containment rows and the units' BM25 postings are written in the same transaction, which bumps
    the corpus's graph_version.
    """
    counts = WriteCounts()
    with transaction(engine) as session:
        session.execute(ENTITY_LOCK, {"key": ENTITY_LOCK_KEY, "corpus": corpus})
        wanted = [item.passage_id for item in items]
        open_ids = set(
            session.execute(
                select(Passage.id).where(
                    Passage.id.in_(wanted), Passage.corpus_id == corpus, Passage.status != "done"
                )
            ).scalars()
        )
        todo = [item for item in items if item.passage_id in open_ids]
        if not todo:
            return counts
        proposition_ids, lexemes = _insert_propositions(session, corpus, todo)
        _resolve_and_link(session, corpus, todo, proposition_ids, type_threshold, counts)
        passages = [item.passage_id for item in todo]
        layer = {"corpus": corpus, "passages": passages}
        session.execute(INSERT_COOCCURRENCES, layer)
        session.execute(INSERT_CONTAINMENT, layer)
        add_unit_postings(session, corpus, passages)
        session.execute(update(Passage).where(Passage.id.in_(passages)).values(status="done"))
        session.execute(
            update(Corpus)
            .where(Corpus.id == corpus)
            .values(
                n_propositions=Corpus.n_propositions + sum(len(ids) for ids in proposition_ids),
                n_proposition_lexemes=Corpus.n_proposition_lexemes + lexemes,
                graph_version=Corpus.graph_version + 1,
            )
        )
        counts.passages = len(todo)
        counts.propositions = sum(len(ids) for ids in proposition_ids)
    return counts


def _insert_propositions(
    session: Session, corpus: int, items: Sequence[ExtractedPassage]
) -> tuple[list[list[int]], int]:
    rows = [
        {
            "corpus_id": corpus,
            "passage_id": item.passage_id,
            "position": position,
            "text": statement,
            "embedding": item.embeddings[position],
        }
        for item in items
        for position, statement in enumerate(item.propositions)
    ]
    if not rows:
        return [[] for _ in items], 0
    returned = session.execute(
        insert(Proposition).returning(
            Proposition.id, Proposition.n_lexemes, sort_by_parameter_order=True
        ),
        rows,
    ).all()
    ids_per_item: list[list[int]] = []
    cursor = 0
    for item in items:
        n = len(item.propositions)
        ids_per_item.append([row[0] for row in returned[cursor : cursor + n]])
        cursor += n
    return ids_per_item, sum(row[1] for row in returned)


def _resolve_and_link(
    session: Session,
    corpus: int,
    items: Sequence[ExtractedPassage],
    proposition_ids: list[list[int]],
    threshold: float,
    counts: WriteCounts,
) -> None:
    mentions = [
        (entity, [ids[i] for i in entity.proposition_indices if 0 <= i < len(ids)])
        for item, ids in zip(items, proposition_ids, strict=True)
        for entity in item.entities
    ]
    names = {canonical_name(entity.name) for entity, _ in mentions}
    names.discard("")
    candidates = [
        EntityCandidate(
            row.id,
            row.canonical_name,
            None if row.type_embedding is None else np.asarray(row.type_embedding, np.float32),
        )
        for row in session.execute(
            select(Entity.id, Entity.canonical_name, Entity.type_embedding).where(
                Entity.corpus_id == corpus, Entity.canonical_name.in_(names)
            )
        )
    ]
    edges: set[tuple[int, int]] = set()
    for entity, linked in mentions:
        canonical = canonical_name(entity.name)
        if not canonical or not linked:
            continue  # an entity exists only through the units that mention it
        match = choose_match(canonical, entity.type_embedding, candidates, threshold)
        if match is None:
            match = session.execute(
                insert(Entity)
                .values(
                    corpus_id=corpus,
                    name=entity.name.strip(),
                    canonical_name=canonical,
                    type=entity.type.strip(),
                    type_embedding=entity.type_embedding,
                )
                .returning(Entity.id)
            ).scalar_one()
            candidates.append(EntityCandidate(match, canonical, entity.type_embedding))
            counts.entities_new += 1
        else:
            counts.entities_merged += 1
        edges.update((match, proposition) for proposition in linked)
    if edges:
        session.execute(
            insert(EntityProposition).on_conflict_do_nothing(),
            [{"entity_id": e, "proposition_id": p} for e, p in sorted(edges)],
        )
    counts.edges += len(edges)


# A plain executemany, not the ORM's bulk update by primary key, which fails the whole chunk when
# a passage was deleted (`grasp delete`, a re-index of its file) after its vector was computed.
SET_PASSAGE_EMBEDDING = text(
    "UPDATE passages SET embedding = :vector WHERE id = :passage"
).bindparams(bindparam("vector", type_=Vector(EMBEDDING_DIM)))


def set_passage_embeddings(engine: Engine, ids: Sequence[int], vectors: FloatVector) -> None:
    """Store passage embeddings (used by the dense baselines, not by GRASP itself).

    Passages deleted meanwhile are skipped.
    """
    with transaction(engine) as session:
        session.connection().execute(
            SET_PASSAGE_EMBEDDING,
            [{"passage": pid, "vector": vector} for pid, vector in zip(ids, vectors, strict=True)],
        )


def passages_without_embedding(engine: Engine, corpus: int) -> list[tuple[int, str]]:
    """Passages of a corpus still lacking an embedding, as (id, title + text)."""
    with transaction(engine) as session:
        rows = session.execute(
            select(Passage.id, Passage.title, Passage.text)
            .where(Passage.corpus_id == corpus, Passage.embedding.is_(None))
            .order_by(Passage.position)
        ).all()
    return [(row[0], f"{row[1]}: {row[2]}") for row in rows]
