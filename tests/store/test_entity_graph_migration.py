"""Migration 0002: a corpus indexed at 0001 gets its co-occurrence and containment rows on upgrade
(and, from 0006, its BM25 postings; from 0007, its entities' degrees; from 0012, its unit df);
downgrade to base and back works; the models match the migrated schema (alembic check)."""

from __future__ import annotations

from alembic import command
from sqlalchemy import text

from store.engine import alembic_config, make_engine, migrate

VECTOR = "CAST(array_fill(0.1, ARRAY[384]) AS vector)"

# Corpus 1 at revision 0001: P1 has u1 {A, B, C} and u2 {A, B}; P2 has u3 {B} and u4 {}.
# Corpus 2 has one passage with one unit {D, E}.
OLD_DATA = f"""
INSERT INTO corpora (id, name) VALUES (1, 'old'), (2, 'other');
INSERT INTO passages (id, corpus_id, title, text, content_hash, position, status) VALUES
    (1, 1, 'P1', 'one', 'h1', 0, 'done'), (2, 1, 'P2', 'two', 'h2', 1, 'done'),
    (3, 2, 'P3', 'three', 'h3', 0, 'done');
INSERT INTO propositions (id, corpus_id, passage_id, position, text, embedding) VALUES
    (1, 1, 1, 0, 'u1', {VECTOR}), (2, 1, 1, 1, 'u2', {VECTOR}),
    (3, 1, 2, 0, 'u3', {VECTOR}), (4, 1, 2, 1, 'u4', {VECTOR}),
    (5, 2, 3, 0, 'u5', {VECTOR});
INSERT INTO entities (id, corpus_id, name, canonical_name, type) VALUES
    (1, 1, 'A', 'a', 't'), (2, 1, 'B', 'b', 't'), (3, 1, 'C', 'c', 't'),
    (4, 2, 'D', 'd', 't'), (5, 2, 'E', 'e', 't');
INSERT INTO entity_propositions (entity_id, proposition_id) VALUES
    (1, 1), (2, 1), (3, 1), (1, 2), (2, 2), (2, 3), (4, 5), (5, 5);
"""


def rows(url: str, sql: str) -> list[tuple[object, ...]]:
    engine = make_engine(url, pool_size=1)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql))]
    finally:
        engine.dispose()


def test_upgrade_backfills_the_layer_and_downgrade_removes_it(fresh_database: str) -> None:
    migrate(fresh_database, "0001")
    engine = make_engine(fresh_database, pool_size=1)
    with engine.begin() as conn:
        for statement in OLD_DATA.strip().split(";\n"):
            conn.execute(text(statement))
    engine.dispose()

    migrate(fresh_database, "head")
    assert rows(
        fresh_database,
        "SELECT corpus_id, entity_a, entity_b, proposition_id FROM entity_cooccurrences "
        "ORDER BY 2, 3, 4",
    ) == [(1, 1, 2, 1), (1, 1, 2, 2), (1, 1, 3, 1), (1, 2, 3, 1), (2, 4, 5, 5)]
    assert rows(
        fresh_database,
        "SELECT corpus_id, entity_id, passage_id, n_units FROM entity_passages ORDER BY 2, 3",
    ) == [(1, 1, 1, 2), (1, 2, 1, 2), (1, 2, 2, 1), (1, 3, 1, 1), (2, 4, 3, 1), (2, 5, 3, 1)]
    assert rows(fresh_database, "SELECT count(*) FROM entity_synonyms") == [(0,)]
    assert rows(fresh_database, "SELECT DISTINCT graph_version FROM corpora") == [(0,)]
    assert rows(
        fresh_database,
        "SELECT DISTINCT name_embedding IS NULL, synonyms_linked FROM entities",
    ) == [(True, False)]
    # 0007 stores each old entity's number of entity–unit edges.
    assert rows(fresh_database, "SELECT id, degree FROM entities ORDER BY id") == [
        (1, 2),
        (2, 3),
        (3, 1),
        (4, 1),
        (5, 1),
    ]
    # 0006 posts the old rows' lexemes for BM25, from their stored tsv ('u1'; 'p1 one').
    unit_postings = [(1, "u1", 1), (1, "u2", 2), (1, "u3", 3), (1, "u4", 4), (2, "u5", 5)]
    assert (
        rows(
            fresh_database,
            "SELECT corpus_id, lexeme, proposition_id FROM proposition_postings "
            "WHERE tf = 1 AND n_lexemes = 1 ORDER BY 3",
        )
        == unit_postings
    )
    assert rows(fresh_database, "SELECT count(*) FROM proposition_postings") == [(5,)]
    # 0012 counts each unit lexeme's df from those postings (one unit per lexeme here).
    assert rows(
        fresh_database,
        "SELECT corpus_id, lexeme, df FROM unit_lexeme_frequencies ORDER BY 2",
    ) == [(corpus, lexeme, 1) for corpus, lexeme, _ in unit_postings]
    passage_postings = [(1, "one", 1), (1, "p1", 1), (1, "p2", 2), (1, "two", 2)]
    assert rows(
        fresh_database,
        "SELECT corpus_id, lexeme, passage_id FROM passage_postings "
        "WHERE tf = 1 AND n_lexemes = 2 ORDER BY 3, 2",
    ) == [*passage_postings, (2, "p3", 3), (2, "three", 3)]
    assert rows(fresh_database, "SELECT count(*) FROM passage_postings") == [(6,)]
    command.check(alembic_config(fresh_database))  # the models describe the migrated schema

    command.downgrade(alembic_config(fresh_database), "0001")
    tables = {r[0] for r in rows(fresh_database, "SELECT tablename FROM pg_tables")}
    assert not tables & {"entity_synonyms", "entity_cooccurrences", "entity_passages"}
    assert rows(fresh_database, "SELECT count(*) FROM entity_propositions") == [(8,)]
    command.downgrade(alembic_config(fresh_database), "base")
    migrate(fresh_database, "head")
    command.check(alembic_config(fresh_database))
