"""Stored entity degrees: the write path and the deletion keep them equal to the edge counts,
retrieval reads them, migration 0007's backfill gives the same numbers, the corpus check sees drift.

Corpora are written through the real write path in two batches, so the second batch both creates
entities (inserted with their degree) and adds edges to the first batch's (an UPDATE).
"""

from __future__ import annotations

import numpy as np
from alembic import command
from sqlalchemy import Engine, text

from store.corpora import ensure_corpus
from store.deletion import delete_titled
from store.engine import alembic_config, migrate, transaction
from store.graph_writes import ExtractedEntity, ExtractedPassage, write_extracted
from store.integrity import integrity_problems
from store.passage_writes import add_passages
from store.retrieval import entity_links

DEGREE_CHECK = "entity degrees that differ from their edges"

#: (title, units, entities as (name, indices of the passage's units)), per batch. "ZORVIK" is a
#: second mention of Zorvik in the same unit: one edge, not two.
FIRST = [
    (
        "Zorvik",
        ["Zorvik founded Talmora.", "Zorvik painted rivers."],
        [("Zorvik", (0, 1)), ("ZORVIK", (0,)), ("Talmora", (0,))],
    ),
    (
        "Quenlar",
        ["Talmora borders Quenlar.", "Quenlar exports copper."],
        [("Talmora", (0,)), ("Quenlar", (0, 1)), ("Copper", (1,))],
    ),
]
SECOND = [
    (
        "Miravel",
        ["Miravel studied copper.", "Miravel visited Talmora."],
        [("Miravel", (0, 1)), ("Copper", (0,)), ("Talmora", (1,))],
    ),
]
DEGREES = {"Zorvik": 2, "Talmora": 3, "Quenlar": 2, "Copper": 2, "Miravel": 2}
#: The edges Quenlar's passage holds: what its deletion must take off each entity.
QUENLAR_EDGES = {"Talmora": 1, "Quenlar": 2, "Copper": 1}

Batch = list[tuple[str, list[str], list[tuple[str, tuple[int, ...]]]]]

# Per entity of the corpus: its stored degree and its edges counted.
DEGREES_AND_EDGES = text("""
SELECT e.name, e.degree,
       (SELECT count(*) FROM entity_propositions ep WHERE ep.entity_id = e.id)
FROM entities e WHERE e.corpus_id = :corpus
""")
UNITS = text("SELECT id FROM propositions WHERE corpus_id = :corpus ORDER BY id")
ALL_DEGREES = text("SELECT id, degree FROM entities ORDER BY id")
HNSW_DEF = text("""
SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_entities_name_embedding_hnsw'
""")
HAS_DEGREE = text("""
SELECT count(*) FROM information_schema.columns
WHERE table_name = 'entities' AND column_name = 'degree'
""")
# A name vector for every entity, so the migration's UPDATE meets rows the HNSW index holds.
NAME_VECTORS = text("""
UPDATE entities SET name_embedding = CAST(array_fill(0.1, ARRAY[384]) AS vector)
""")


def write_batch(engine: Engine, corpus: int, batch: Batch) -> None:
    rows = add_passages(engine, corpus, [(title, " ".join(units)) for title, units, _ in batch])
    axes = iter(np.eye(384, dtype=np.float32))
    items = [
        ExtractedPassage(
            row.id,
            units,
            np.stack([next(axes) for _ in units]),
            [ExtractedEntity(name, "Thing", where) for name, where in entities],
        )
        for row, (_, units, entities) in zip(rows, batch, strict=True)
    ]
    write_extracted(engine, corpus, items)


def index_corpus(engine: Engine, name: str) -> int:
    corpus = ensure_corpus(engine, name, "test")
    write_batch(engine, corpus, FIRST)
    write_batch(engine, corpus, SECOND)
    return corpus


def degrees(engine: Engine, corpus: int) -> dict[str, int]:
    """Each entity's stored degree, after asserting it equals its counted edges."""
    with transaction(engine) as session:
        rows = session.execute(DEGREES_AND_EDGES, {"corpus": corpus}).all()
    assert [(r[0], r[1]) for r in rows if r[1] != r[2]] == []
    return {str(r[0]): int(r[1]) for r in rows}


def linked_degrees(engine: Engine, corpus: int) -> dict[str, int]:
    """The degrees retrieval's entity_links gives for every unit of the corpus."""
    with transaction(engine) as session:
        units = list(session.execute(UNITS, {"corpus": corpus}).scalars())
        return {link.name: link.degree for link in entity_links(session, units)}


def test_degrees_follow_the_batches_and_the_deletion(engine: Engine) -> None:
    corpus = index_corpus(engine, "a")
    other = index_corpus(engine, "other")
    assert degrees(engine, corpus) == DEGREES
    assert linked_degrees(engine, corpus) == DEGREES
    assert integrity_problems(engine, corpus)[DEGREE_CHECK] == 0

    assert delete_titled(engine, corpus, "Quenlar").entities == 1  # Quenlar itself
    after = degrees(engine, corpus)
    # The survivors lost exactly the deleted passage's edges; Zorvik and Miravel kept theirs.
    assert after == {
        name: degree - QUENLAR_EDGES.get(name, 0)
        for name, degree in DEGREES.items()
        if name != "Quenlar"
    }
    assert after == {"Zorvik": 2, "Talmora": 2, "Copper": 1, "Miravel": 2}
    assert linked_degrees(engine, corpus) == after
    assert degrees(engine, other) == DEGREES  # another corpus's entities are never touched
    assert not any(integrity_problems(engine, corpus).values())

    write_batch(engine, corpus, [FIRST[1]])  # the passage back: its edges back on the survivors
    assert degrees(engine, corpus) == DEGREES
    assert not any(integrity_problems(engine, corpus).values())


def test_the_corpus_check_counts_degrees_that_drift(engine: Engine) -> None:
    corpus = index_corpus(engine, "a")
    with transaction(engine) as session:
        session.execute(text("UPDATE entities SET degree = degree + 1 WHERE name = 'Talmora'"))
    assert integrity_problems(engine, corpus)[DEGREE_CHECK] == 1


def test_the_backfill_equals_what_the_write_path_kept(
    migrated: Engine, fresh_database: str
) -> None:
    first = index_corpus(migrated, "first")
    second = index_corpus(migrated, "second")
    delete_titled(migrated, second, "Quenlar")  # the deletion's upkeep is part of it
    with transaction(migrated) as session:
        session.execute(NAME_VECTORS)
        written = session.execute(ALL_DEGREES).all()
        index = session.execute(HNSW_DEF).scalar_one()
    assert {degree for _, degree in written} == {1, 2, 3}

    command.downgrade(alembic_config(fresh_database), "0006")
    with transaction(migrated) as session:
        assert session.execute(HAS_DEGREE).scalar_one() == 0

    migrate(fresh_database, "head")  # the rows now predate the column: all from the backfill
    with transaction(migrated) as session:
        assert session.execute(ALL_DEGREES).all() == written
        assert session.execute(HNSW_DEF).scalar_one() == index  # rebuilt as it was
    for corpus in (first, second):
        assert not any(integrity_problems(migrated, corpus).values())
    command.check(alembic_config(fresh_database))  # the models describe the migrated schema
