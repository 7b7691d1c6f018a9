"""Other databases on the same server: a benchmark keeps each corpus size in one of its own.

Corpora of one database share its HNSW indexes, so a search filtered to one corpus walks past the
others' vectors (pgvector's iterative scan keeps going until enough rows pass the filter): a
60k-proposition corpus beside a 600k one costs several times what it costs alone. A database
per size measures each size alone, on one server and one buffer cache.
"""

from __future__ import annotations

import re

from sqlalchemy import Engine, text
from sqlalchemy.engine import make_url

from store.engine import libpq_url

DATABASE_EXISTS = text("SELECT 1 FROM pg_database WHERE datname = :name")
# Identifiers cannot be bound parameters: the name is checked against DATABASE_NAME first.
CREATE_DATABASE = 'CREATE DATABASE "{name}"'
DATABASE_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")


def database_name(label: str) -> str:
    """A database name from a label such as a corpus name: lower case, `-` becomes `_`."""
    name = label.lower().replace("-", "_")
    if not DATABASE_NAME.fullmatch(name):
        raise ValueError(f"cannot name a database after {label!r}")
    return name


def ensure_database(engine: Engine, name: str) -> bool:
    """Create database `name` on the engine's server unless it exists; True when created."""
    if not DATABASE_NAME.fullmatch(name):
        raise ValueError(f"not a database name: {name!r}")
    # CREATE DATABASE cannot run inside a transaction block.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        if conn.execute(DATABASE_EXISTS, {"name": name}).first() is not None:
            return False
        conn.execute(text(CREATE_DATABASE.format(name=name)))
    return True


def database_url(url: str, name: str) -> str:
    """`url` pointing at database `name` of the same server, as libpq takes it."""
    return libpq_url(make_url(url).set(database=name).render_as_string(hide_password=False))
