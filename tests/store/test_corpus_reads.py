"""Whole-corpus reads (gold lookup, benchmark sampling) and server upkeep, on two corpora."""

from __future__ import annotations

import uuid

import numpy as np
from sqlalchemy import Engine, text

from store.corpora import delete_corpus, ensure_corpus
from store.corpus_reads import (
    corpus_passages,
    entity_mentions,
    has_passage,
    proposition_counter,
    proposition_ids,
    stored_propositions,
)
from store.engine import checkpoint, make_engine, server_version, vacuum_analyze
from store.graph_writes import ExtractedEntity, ExtractedPassage, write_extracted
from store.passage_writes import add_passages
from store.retrieval import PassageText

AXES = np.eye(384, dtype=np.float32)


def index(engine: Engine, name: str, passages: list[tuple[str, list[str]]]) -> int:
    corpus = ensure_corpus(engine, name, "test")
    rows = add_passages(engine, corpus, [(title, " ".join(ps)) for title, ps in passages])
    write_extracted(
        engine,
        corpus,
        [
            ExtractedPassage(
                row.id,
                ps,
                AXES[1 : len(ps) + 1],
                [ExtractedEntity(title, "Thing", tuple(range(len(ps))))],
            )
            for row, (title, ps) in zip(rows, passages, strict=True)
        ],
    )
    return corpus


def test_reads_see_one_corpus_only(engine: Engine) -> None:
    a = index(engine, "a", [("Alpha", ["Alpha one.", "Alpha two."]), ("Beta", ["Beta one."])])
    b = index(engine, "b", [("Gamma", ["Gamma one."])])
    passages = corpus_passages(engine, a)
    assert [(p.title, p.text) for p in passages] == [
        ("Alpha", "Alpha one. Alpha two."),
        ("Beta", "Beta one."),
    ]
    assert all(isinstance(p, PassageText) for p in passages)
    assert passages[0].id < passages[1].id
    assert has_passage(engine, a, "Beta", "Beta one.")
    assert not has_passage(engine, b, "Beta", "Beta one.")
    assert not has_passage(engine, a, "Beta", "Beta two.")
    assert (proposition_counter(engine, a), proposition_counter(engine, b)) == (3, 1)
    ids = proposition_ids(engine, a)
    assert ids == sorted(ids) and len(ids) == 3
    assert not set(ids) & set(proposition_ids(engine, b))
    assert sorted(entity_mentions(engine, a)) == [
        (ids[0], "Alpha"),
        (ids[1], "Alpha"),
        (ids[2], "Beta"),
    ]


def test_stored_propositions_follow_the_given_order(engine: Engine) -> None:
    a = index(engine, "a", [("Alpha", ["Alpha one.", "Alpha two."])])
    first, second = proposition_ids(engine, a)
    found = stored_propositions(engine, [second, 10_000, first])
    assert [(p.id, p.text) for p in found] == [(second, "Alpha two."), (first, "Alpha one.")]
    assert np.array_equal(found[0].embedding, AXES[2])
    assert found[0].embedding.dtype == np.float32


def test_upkeep_and_deletion(engine: Engine) -> None:
    index(engine, "a", [("Alpha", ["Alpha one."])])
    assert server_version(engine).split(".")[0].isdigit()
    vacuum_analyze(engine)
    assert delete_corpus(engine, "a")
    assert not delete_corpus(engine, "a")


def test_a_checkpoint_is_written_or_refused_for_a_role_that_may_not(engine: Engine) -> None:
    index(engine, "a", [("Alpha", ["Alpha one."])])
    before = _checkpoint_lsn(engine)
    assert checkpoint(engine)
    assert _checkpoint_lsn(engine) != before
    role = f"grasp_plain_{uuid.uuid4().hex[:8]}"
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f"CREATE ROLE {role} LOGIN"))
    plain = make_engine(engine.url.set(username=role).render_as_string(hide_password=False))
    try:
        assert not checkpoint(plain)
    finally:
        plain.dispose()
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text(f"DROP ROLE {role}"))


def _checkpoint_lsn(engine: Engine) -> str:
    with engine.connect() as conn:
        return str(
            conn.execute(text("SELECT checkpoint_lsn FROM pg_control_checkpoint()")).scalar()
        )
