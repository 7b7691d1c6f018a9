"""Binary COPY into a table inside the caller's transaction: the fast path for a batch's rows.

A batch's propositions and entity edges are thousands of rows; COPY in binary sends each vector
as 384 raw floats, where an INSERT would format and parse them as text, row by row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pgvector.psycopg import register_vector
from psycopg import Connection, sql
from sqlalchemy import text
from sqlalchemy.orm import Session

# Ids for rows written by COPY are drawn up front, so the caller can link them at once.
NEXT_IDS = text("SELECT nextval(pg_get_serial_sequence(:table, 'id')) FROM generate_series(1, :n)")


def driver_connection(session: Session) -> Connection[Any]:
    """The psycopg connection under the session's current transaction."""
    raw = session.connection().connection.driver_connection
    if not isinstance(raw, Connection):
        raise TypeError(f"binary COPY needs a psycopg 3 connection, got {type(raw).__name__}")
    if raw.adapters.types.get("vector") is None:
        register_vector(raw)  # once per connection: it looks the type's oid up
    return raw


def next_ids(session: Session, table: str, count: int) -> list[int]:
    """`count` fresh values of the table's id sequence, in order."""
    if count <= 0:
        return []
    return list(session.execute(NEXT_IDS, {"table": table, "n": count}).scalars())


def copy_rows(
    session: Session,
    table: str,
    columns: Sequence[str],
    types: Sequence[str],
    rows: Iterable[Sequence[Any]],
) -> None:
    """COPY `rows` (tuples in `columns` order, of PostgreSQL `types`) into `table`, binary."""
    statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    with driver_connection(session).cursor() as cursor, cursor.copy(statement) as copy:
        copy.set_types(list(types))
        for row in rows:
            copy.write_row(row)
