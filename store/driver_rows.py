"""Hot-path statements run on the session's own psycopg connection, and id lists for them."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Dialect, TextClause
from sqlalchemy.orm import Session


def id_list(values: Sequence[int]) -> list[int]:
    """Plain ints (numpy ints and the like do not bind as a bigint array)."""
    return [int(v) for v in values]


@functools.cache
def _driver_sql(statement: TextClause, dialect: Dialect) -> str:
    return str(statement.compile(dialect=dialect))


def fetch_rows(
    session: Session, statement: TextClause, params: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """All rows of `statement`, run on the session's own psycopg connection (same transaction).

    Retrieval runs several statements per agent step and lives on its latency: going around
    SQLAlchemy's execution and result layers saves ≈0.5 ms a statement (measured on 60k units).
    """
    connection = session.connection()
    driver = connection.connection.driver_connection
    if driver is None:  # a checked-out connection always has one; this says so to the type checker
        raise RuntimeError("the session's connection has no driver connection")
    with driver.cursor() as cursor:
        cursor.execute(_driver_sql(statement, connection.dialect), params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows
