"""Write extracted propositions, resolved entities and their edges for a batch of passages."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, select, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from store.bulk_copy import copy_rows, next_ids
from store.corpus_lock import lock_corpus
from store.engine import transaction
from store.entities import DEFAULT_TYPE_THRESHOLD, EntityCandidate, canonical_name, choose_match
from store.models import Corpus, Entity, Passage
from store.postings import add_unit_postings
from store.vector_bytes import vector_bytes, vector_from_bytes

FloatVector = npt.NDArray[np.float32]

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


PROPOSITION_COLUMNS = ("id", "corpus_id", "passage_id", "position", "text", "embedding")
PROPOSITION_TYPES = ("int8", "int4", "int8", "int4", "text", "vector")
EDGE_COLUMNS = ("entity_id", "proposition_id")
EDGE_TYPES = ("int8", "int8")
SUM_LEXEMES = text("SELECT coalesce(sum(n_lexemes), 0) FROM propositions WHERE id = ANY(:ids)")
# Stored degrees move with the edges, in the transaction that adds or removes them: one statement
# for all of a write's entities, each with its number of edges added (negative: removed).
CHANGE_DEGREES = text("""
UPDATE entities e SET degree = e.degree + v.n
FROM unnest(CAST(:ids AS bigint[]), CAST(:changes AS integer[])) AS v(id, n)
WHERE e.id = v.id AND e.corpus_id = :corpus
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
    alone. The write holds the corpus's lock (store/corpus_lock.py), so concurrent batches never
    create the same entity twice; extraction itself (the slow part) runs outside it. The batch's co-occurrence and
    containment rows, its entities' degrees and the units' BM25 postings are written in the same
    transaction, which bumps the corpus's graph_version.
    """
    counts = WriteCounts()
    with transaction(engine) as session:
        lock_corpus(session, corpus)
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
    """COPY the batch's propositions; return their ids per passage and their lexemes in all."""
    ids = next_ids(session, "propositions", sum(len(item.propositions) for item in items))
    if not ids:
        return [[] for _ in items], 0
    rows = (
        (pid, corpus, item.passage_id, position, statement, vector)
        for pid, (item, position, statement, vector) in zip(
            ids,
            (
                (item, position, statement, item.embeddings[position])
                for item in items
                for position, statement in enumerate(item.propositions)
            ),
            strict=True,
        )
    )
    copy_rows(session, "propositions", PROPOSITION_COLUMNS, PROPOSITION_TYPES, rows)
    ids_per_item: list[list[int]] = []
    cursor = 0
    for item in items:
        n = len(item.propositions)
        ids_per_item.append(ids[cursor : cursor + n])
        cursor += n
    lexemes = session.execute(SUM_LEXEMES, {"ids": ids}).scalar_one()
    return ids_per_item, int(lexemes)


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
    # Candidates by canonical name: only same-named entities can merge, and a batch of thousands
    # of mentions must not scan every candidate for each one.
    candidates: dict[str, list[EntityCandidate]] = defaultdict(list)
    for row in session.execute(
        select(
            Entity.id,
            Entity.canonical_name,
            vector_bytes(Entity.type_embedding, "type_embedding"),
        ).where(Entity.corpus_id == corpus, Entity.canonical_name.in_(names))
    ):
        embedding = None if row.type_embedding is None else vector_from_bytes(row.type_embedding)
        candidates[row.canonical_name].append(
            EntityCandidate(row.id, row.canonical_name, embedding)
        )
    # New entities get placeholder ids (-1, -2, …) so later mentions in the batch can merge into
    # them; all of them are then inserted in one statement and the placeholders replaced.
    new_rows: list[dict[str, object]] = []
    edges: set[tuple[int, int]] = set()
    for entity, linked in mentions:
        canonical = canonical_name(entity.name)
        if not canonical or not linked:
            continue  # an entity exists only through the units that mention it
        match = choose_match(canonical, entity.type_embedding, candidates[canonical], threshold)
        if match is None:
            match = -(len(new_rows) + 1)
            new_rows.append(
                {
                    "corpus_id": corpus,
                    "name": entity.name.strip(),
                    "canonical_name": canonical,
                    "type": entity.type.strip(),
                    "type_embedding": entity.type_embedding,
                }
            )
            candidates[canonical].append(EntityCandidate(match, canonical, entity.type_embedding))
        else:
            counts.entities_merged += 1
        edges.update((match, proposition) for proposition in linked)
    added = Counter(entity for entity, _ in edges)
    # A new entity is inserted with its degree, so it gets no second row version in this write.
    for n, new in enumerate(new_rows):
        new["degree"] = added[-(n + 1)]
    counts.entities_new += len(new_rows)
    real = _insert_entities(session, new_rows)
    resolved = sorted({(real[e] if e < 0 else e, p) for e, p in edges})
    copy_rows(session, "entity_propositions", EDGE_COLUMNS, EDGE_TYPES, resolved)
    change_degrees(session, corpus, {e: n for e, n in added.items() if e > 0})
    counts.edges += len(resolved)


def change_degrees(session: Session, corpus: int, changes: Mapping[int, int]) -> None:
    """Add to each entity's stored degree its change (edges added, or minus those removed)."""
    if changes:
        ids = sorted(changes)
        session.execute(
            CHANGE_DEGREES,
            {"corpus": corpus, "ids": ids, "changes": [changes[e] for e in ids]},
        )


def _insert_entities(session: Session, rows: list[dict[str, object]]) -> dict[int, int]:
    """Insert new entities in one statement; map each placeholder id (-1, -2, …) to its real id."""
    if not rows:
        return {}
    ids = session.execute(
        insert(Entity).returning(Entity.id, sort_by_parameter_order=True), rows
    ).scalars()
    return {-(n + 1): entity_id for n, entity_id in enumerate(ids)}


# Vectors are staged by binary COPY and applied in one joined UPDATE, so a passage deleted (`grasp
# delete`, a re-index of its file) after its vector was computed simply finds no row to update.
STAGE_PASSAGE_VECTORS = text(
    "CREATE TEMP TABLE passage_vectors (id int8, embedding vector) ON COMMIT DROP"
)
APPLY_PASSAGE_VECTORS = text(
    "UPDATE passages p SET embedding = v.embedding FROM passage_vectors v WHERE p.id = v.id"
)


def set_passage_embeddings(engine: Engine, ids: Sequence[int], vectors: FloatVector) -> None:
    """Store passage embeddings (the dense baselines' index, and GRASP's dense prior in the vote).

    Passages deleted meanwhile are skipped.
    """
    with transaction(engine) as session:
        session.execute(STAGE_PASSAGE_VECTORS)
        copy_rows(
            session,
            "passage_vectors",
            ("id", "embedding"),
            ("int8", "vector"),
            zip(ids, vectors, strict=True),
        )
        session.execute(APPLY_PASSAGE_VECTORS)


def passages_without_embedding(engine: Engine, corpus: int) -> list[tuple[int, str]]:
    """Passages of a corpus still lacking an embedding, as (id, title + text)."""
    with transaction(engine) as session:
        rows = session.execute(
            select(Passage.id, Passage.title, Passage.text)
            .where(Passage.corpus_id == corpus, Passage.embedding.is_(None))
            .order_by(Passage.position)
        ).all()
    return [(row[0], f"{row[1]}: {row[2]}") for row in rows]
