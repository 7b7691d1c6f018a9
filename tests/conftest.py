"""Shared fixtures: one embedded PostgreSQL + pgvector server for the whole test session."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from store.embedded import start_embedded_server, stop_embedded_server
from store.engine import libpq_url, make_engine, migrate

TABLES = (
    "proposition_postings, passage_postings, unit_lexeme_frequencies, "
    "entity_synonyms, entity_cooccurrences, entity_passages, "
    "entity_propositions, entities, extraction_failures, propositions, passages, "
    "llm_calls, llm_cache, corpora"
)


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URI of an embedded server living in a temp dir, deleted at the end of the session."""
    # Outside pytest's 0700 temp tree: postgres runs as another OS user when we are root.
    data_dir = Path(tempfile.mkdtemp(prefix="grasp-test-pg-"))
    uri = start_embedded_server(data_dir / "pgdata", cleanup="delete")
    yield uri
    # pgserver stops it only once every process it registered has gone; a test's subprocess that
    # reused it can leave the server running after the session, so stop it ourselves.
    stop_embedded_server(data_dir / "pgdata", force=True)
    shutil.rmtree(data_dir, ignore_errors=True)


def create_database(server_uri: str, name: str) -> str:
    """Create an empty database on the test server and return its URI."""
    engine = make_engine(server_uri, pool_size=1)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return server_uri.replace("/postgres?", f"/{name}?")


@pytest.fixture(scope="session")
def database_url(pg_server: str) -> str:
    """A migrated database shared by the store and graph tests."""
    url = create_database(pg_server, "grasp_test")
    migrate(url)
    return libpq_url(url)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on a wiped database: every test starts empty."""
    engine = make_engine(database_url, pool_size=4)
    with engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
    yield engine
    engine.dispose()


@pytest.fixture
def fresh_database(pg_server: str) -> str:
    """An empty, unmigrated database of its own (for migration tests)."""
    return create_database(pg_server, f"grasp_{uuid.uuid4().hex[:10]}")


@pytest.fixture
def migrated(fresh_database: str) -> Iterator[Engine]:
    """An engine on a fresh database migrated to head (for backfill-against-write-path tests)."""
    migrate(fresh_database, "head")
    engine = make_engine(fresh_database, pool_size=2)
    yield engine
    engine.dispose()
