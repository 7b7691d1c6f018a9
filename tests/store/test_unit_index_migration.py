"""Migration 0011: the units' HNSW graph is rebuilt over halfvec (the passages' stays float4), a
graph already built that way is kept, and downgrade restores the float4 graph."""

from __future__ import annotations

import numpy as np
import pytest
from alembic import command
from sqlalchemy import Engine, text

from store.engine import alembic_config, make_engine, migrate, transaction
from store.retrieval import HYBRID_PROPOSITIONS, dense_propositions, vector_literal

UNIT_INDEX = "ix_propositions_embedding_hnsw"
DEFINITIONS = text(
    "SELECT c.relname, i.indexdef, c.oid FROM pg_indexes i JOIN pg_class c ON c.relname = i.indexname"
    " WHERE i.indexname IN ('ix_propositions_embedding_hnsw', 'ix_passages_embedding_hnsw')"
)
HALF_GRAPH = text(
    f"CREATE INDEX {UNIT_INDEX} ON propositions USING hnsw ((embedding::halfvec(384)) "
    "halfvec_cosine_ops) WITH (m = 16, ef_construction = 64)"
)


def _vector(axis: int, weight: float) -> str:
    values = np.zeros(384, dtype=np.float32)
    values[0], values[axis] = weight, (1 - weight**2) ** 0.5
    return vector_literal(values)


def _definitions(engine: Engine) -> dict[str, tuple[str, int]]:
    with transaction(engine) as session:
        return {name: (sql, int(oid)) for name, sql, oid in session.execute(DEFINITIONS)}


def _seed(engine: Engine) -> None:
    with transaction(engine) as session:
        session.execute(text("INSERT INTO corpora (id, name) VALUES (1, 'c')"))
        session.execute(
            text(
                "INSERT INTO passages (id, corpus_id, title, text, content_hash, position, status)"
                " VALUES (1, 1, 'P', 'p', 'h', 0, 'done')"
            )
        )
        for unit, weight in ((1, 0.9), (2, 0.5), (3, 0.7)):
            session.execute(
                text(
                    "INSERT INTO propositions (id, corpus_id, passage_id, position, text, embedding)"
                    " VALUES (:id, 1, 1, :id, 'u', CAST(:v AS vector))"
                ),
                {"id": unit, "v": _vector(unit, weight)},
            )


def test_upgrade_rebuilds_the_unit_graph_as_halfvec_and_downgrade_restores_it(
    fresh_database: str,
) -> None:
    migrate(fresh_database, "0010")
    engine = make_engine(fresh_database, pool_size=1)
    try:
        _seed(engine)
        before = _definitions(engine)
        assert "vector_cosine_ops" in before[UNIT_INDEX][0]
        migrate(fresh_database, "head")
        after = _definitions(engine)
        assert "halfvec_cosine_ops" in after[UNIT_INDEX][0]
        assert "vector_cosine_ops" in after["ix_passages_embedding_hnsw"][0]
        assert after["ix_passages_embedding_hnsw"] == before["ix_passages_embedding_hnsw"]
        query = np.zeros(384, dtype=np.float32)
        query[0] = 1.0
        with transaction(engine) as session:
            for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                session.execute(text(f"SET LOCAL {setting} = off"))
            plan = session.execute(
                text("EXPLAIN " + HYBRID_PROPOSITIONS.text),
                {
                    "q": vector_literal(query),
                    "keywords": "",
                    "corpus": 1,
                    "k": 2,
                    "exclude": [],
                    "cap": 10,
                },
            )
            assert UNIT_INDEX in "\n".join(plan.scalars())
            # the walk's cosines are the float4 vectors' own: halfvec would be 1e-4 off (0.8999)
            found = dense_propositions(session, 1, query, 2)
            assert found == pytest.approx({1: 0.9, 3: 0.7}, abs=1e-6)
        command.downgrade(alembic_config(fresh_database), "0010")
        assert "vector_cosine_ops" in _definitions(engine)[UNIT_INDEX][0]
    finally:
        engine.dispose()


def test_a_unit_graph_already_built_as_halfvec_is_kept(fresh_database: str) -> None:
    migrate(fresh_database, "0010")
    engine = make_engine(fresh_database, pool_size=1)
    try:
        with transaction(engine) as session:
            session.execute(text(f"DROP INDEX {UNIT_INDEX}"))
            session.execute(HALF_GRAPH)
        built_ahead = _definitions(engine)[UNIT_INDEX]
        migrate(fresh_database, "head")
        assert _definitions(engine)[UNIT_INDEX] == built_ahead  # same index, not rebuilt
    finally:
        engine.dispose()
