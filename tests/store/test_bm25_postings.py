"""BM25 postings: migration 0006's backfill equals the write path, and the corpus check sees drift.

The corpora are written through the real write path (add_passages, write_extracted, a deletion),
so the postings compared are exactly what indexing produces; the migration then rebuilds them
from the stored tsv columns alone. How BM25 scores from them is tested in test_bm25_oracle.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from alembic import command
from sqlalchemy import Engine, text

from store.bm25 import bm25_passages, bm25_propositions
from store.corpora import delete_corpus, ensure_corpus
from store.deletion import delete_titled
from store.engine import alembic_config, migrate, transaction
from store.graph_writes import ExtractedPassage, write_extracted
from store.integrity import integrity_problems
from store.passage_writes import add_passages
from tests.store.test_bm25_oracle import PASSAGES

POSTINGS_CHECK = "BM25 postings that differ from a recount of the stored tsv"
DF_CHECK = "BM25 unit document frequencies that differ from a recount of the postings"
UNIT_POSTINGS = text("""
SELECT corpus_id, lexeme, proposition_id, tf, n_lexemes FROM proposition_postings
ORDER BY corpus_id, lexeme, proposition_id
""")
PASSAGE_POSTINGS = text("""
SELECT corpus_id, lexeme, passage_id, tf, n_lexemes FROM passage_postings
ORDER BY corpus_id, lexeme, passage_id
""")
TABLES = text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
GIN_INDEXES = text("SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING gin%'")
# A unit and a passage with a repeated word (tf > 1) and a compound lexeme.
EXTRA = ("Copper copper", ["Copper, copper and more copper.", "A state-of-the-art copper mine."])


def index_corpus(engine: Engine, name: str, passages: list[tuple[str, list[str]]]) -> int:
    """Write `passages` (title, units) through the write path, as the indexer does."""
    corpus = ensure_corpus(engine, name, "test")
    rows = add_passages(engine, corpus, [(title, " ".join(units)) for title, units in passages])
    axes = iter(np.eye(384, dtype=np.float32))
    write_extracted(
        engine,
        corpus,
        [
            ExtractedPassage(row.id, units, np.stack([next(axes) for _ in units]))
            for row, (_, units) in zip(rows, passages, strict=True)
        ],
    )
    return corpus


#: (corpus, lexeme, row id, tf, n_lexemes)
Posting = tuple[int, str, int, int, int]


def postings(engine: Engine) -> tuple[list[Posting], list[Posting]]:
    """Every posting row of both tables, in key order."""
    with transaction(engine) as session:
        units = [(r[0], r[1], r[2], r[3], r[4]) for r in session.execute(UNIT_POSTINGS)]
        passages = [(r[0], r[1], r[2], r[3], r[4]) for r in session.execute(PASSAGE_POSTINGS)]
    return units, passages


def scores(engine: Engine, corpus: int) -> tuple[dict[int, float], dict[int, float]]:
    with transaction(engine) as session:
        return (
            bm25_propositions(session, corpus, "copper Talmora painted", 50),
            bm25_passages(session, corpus, "copper Talmora painted", 50),
        )


def test_the_backfill_equals_what_the_write_path_posted(
    migrated: Engine, fresh_database: str
) -> None:
    first = index_corpus(migrated, "first", [*PASSAGES, EXTRA])
    index_corpus(migrated, "second", [EXTRA, PASSAGES[0]])
    delete_titled(migrated, first, "Quenlar")  # the write path's deletion is part of it
    written = postings(migrated)
    before = scores(migrated, first)
    units, passages = written
    assert {row[0] for row in units} == {row[0] for row in passages} == {1, 2}
    assert any(row[3] > 1 for row in units) and any(row[3] > 1 for row in passages)
    assert "state-of-the-art" in {row[1] for row in units}
    posted_in_first = {row[1] for row in units + passages if row[0] == first}
    assert not posted_in_first & {"quenlar", "export"}  # only the deleted passage had them
    assert all(before)

    command.downgrade(alembic_config(fresh_database), "0005")
    with transaction(migrated) as session:
        tables = set(session.execute(TABLES).scalars())
        gin = set(session.execute(GIN_INDEXES).scalars())
    assert not tables & {"proposition_postings", "passage_postings"}
    assert gin == {"ix_propositions_tsv", "ix_passages_tsv"}

    migrate(fresh_database, "head")
    assert postings(migrated) == written
    assert scores(migrated, first) == before
    with transaction(migrated) as session:
        assert not set(session.execute(GIN_INDEXES).scalars())
    problems = integrity_problems(migrated, first)
    assert problems[POSTINGS_CHECK] == problems[DF_CHECK] == 0  # 0012 counted the df
    command.check(alembic_config(fresh_database))  # the models describe the migrated schema


def test_adding_stored_passages_again_posts_nothing_more(engine: Engine) -> None:
    corpus = index_corpus(engine, "c", PASSAGES)
    written = postings(engine)
    add_passages(engine, corpus, [(title, " ".join(units)) for title, units in PASSAGES])
    assert postings(engine) == written
    assert not any(integrity_problems(engine, corpus).values())


def test_deleting_a_corpus_removes_only_its_postings(engine: Engine) -> None:
    index_corpus(engine, "gone", PASSAGES)
    kept = index_corpus(engine, "kept", [EXTRA])
    assert delete_corpus(engine, "gone")
    units, passages = postings(engine)
    assert units and passages
    assert {row[0] for row in units} == {row[0] for row in passages} == {kept}


# Each drift, with the postings it changes (as the recount sees them) and the unit lexemes whose
# stored df it leaves wrong: a unit list that loses or gains postings, or the df table itself.
@pytest.mark.parametrize(
    ("drift", "postings_off", "df_off"),
    [
        ("UPDATE proposition_postings SET tf = tf + 1 WHERE lexeme = 'copper'", True, 0),
        ("UPDATE passage_postings SET n_lexemes = n_lexemes + 1 WHERE lexeme = 'zorvik'", True, 0),
        ("DELETE FROM proposition_postings WHERE lexeme = 'talmora'", True, 1),
        ("DELETE FROM passage_postings WHERE lexeme = 'wire'", True, 0),
        (
            "INSERT INTO proposition_postings SELECT corpus_id, 'absent', proposition_id, 1, "
            "n_lexemes FROM proposition_postings WHERE lexeme = 'zorvik'",
            True,
            1,
        ),
        (
            "INSERT INTO passage_postings SELECT corpus_id, 'absent', passage_id, 1, n_lexemes "
            "FROM passage_postings WHERE lexeme = 'zorvik'",
            True,
            0,
        ),
        ("UPDATE unit_lexeme_frequencies SET df = df + 1 WHERE lexeme = 'copper'", False, 1),
        ("DELETE FROM unit_lexeme_frequencies WHERE lexeme IN ('copper', 'wire')", False, 2),
    ],
)
def test_the_corpus_check_counts_postings_that_drift(
    engine: Engine, drift: str, postings_off: bool, df_off: int
) -> None:
    corpus = index_corpus(engine, "c", PASSAGES)
    assert not any(integrity_problems(engine, corpus).values())
    with transaction(engine) as session:
        changed = session.connection().execute(text(drift)).rowcount
    assert changed > 0
    problems = integrity_problems(engine, corpus)
    assert problems[POSTINGS_CHECK] == (changed if postings_off else 0)
    assert problems[DF_CHECK] == df_off
    checked = {POSTINGS_CHECK, DF_CHECK}
    assert not any(count for name, count in problems.items() if name not in checked)


def test_rows_with_the_same_terms_score_bit_identically_and_tie_by_id(engine: Engine) -> None:
    # Six units of one text among others: their terms are added in the same order, so no 1-ulp
    # noise splits the tie, and it falls to the id.
    same = "Copper wire crosses the painted river near Talmora."
    others = [(f"Other {n}", [f"Copper {'wire ' * n}bridges."]) for n in range(1, 4)]
    corpus = index_corpus(engine, "c", [(f"Same {n}", [same]) for n in range(6)] + others)
    with transaction(engine) as session:
        found = bm25_propositions(session, corpus, "copper wire painted river Talmora", 20)
    tied = [pid for pid, score in found.items() if score == max(found.values())]
    assert len(tied) == 6
    assert list(found)[:6] == sorted(tied)
    assert len(found) == 9
