"""Engine and transactions, connection checks, server upkeep, and alembic schema migration."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import OperationalError, ProgrammingError
from sqlalchemy.orm import Session

if TYPE_CHECKING:
    from alembic.config import Config

ALEMBIC_DIR = Path(__file__).resolve().parent.parent / "alembic"


class StoreError(RuntimeError):
    """A problem with the database that the user has to fix (it is down, lacks pgvector, …)."""


def sqlalchemy_url(url: str) -> str:
    """Return `url` with the psycopg 3 driver named, as SQLAlchemy needs it."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    raise StoreError(f"not a PostgreSQL URL: {redact(url)}")


def libpq_url(url: str) -> str:
    """Return `url` as plain libpq accepts it (for psycopg and the LangGraph checkpointer)."""
    return "postgresql://" + sqlalchemy_url(url)[len("postgresql+psycopg://") :]


#: Query parameters of a PostgreSQL URL that hold secrets (libpq's password and sslpassword).
SECRET_PARAMETER = re.compile(r"(?i)([?&](?:ssl)?password=)[^&#\s]*")


def redact(url: str) -> str:
    """Hide the secrets of a URL before it is printed: the password and password parameters."""
    url = SECRET_PARAMETER.sub(r"\1***", url)
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    authority, slash, path = rest.partition("/")
    if "@" not in authority:
        return url
    # The last "@" ends the credentials: an unescaped "@" in a password stays hidden.
    creds, host = authority.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    hidden = f"{user}:***" if ":" in creds else creds
    return f"{scheme}://{hidden}@{host}{slash}{path}"


#: PostgreSQL's SQLSTATE for a full disk (class 53: insufficient resources).
DISK_FULL = "53100"


def is_disk_full(exc: BaseException) -> bool:
    """Whether a database error (SQLAlchemy's or the driver's) says the server's disk is full."""
    seen: BaseException | None = exc
    while seen is not None:
        if getattr(seen, "sqlstate", None) == DISK_FULL:
            return True
        seen = getattr(seen, "orig", None) or seen.__cause__
    return False


# ef_search must exceed the k we ask for, and filters (corpus, visited ids) need the iterative scan
# or HNSW may return fewer rows than requested. Custom plans always: psycopg prepares a statement
# after five runs, and a generic plan of the hybrid search cannot fold the query vector's cast
# (measured on 60k units: 25 ms against 4.5 ms a search).
HNSW_SETTINGS = (
    "SET hnsw.ef_search = 100",
    "SET hnsw.iterative_scan = relaxed_order",
    "SET plan_cache_mode = force_custom_plan",
)


def make_engine(url: str, pool_size: int = 8) -> Engine:
    """Create an engine whose sessions search HNSW indexes deeply enough for filtered top-k."""
    engine = create_engine(
        sqlalchemy_url(url), pool_size=pool_size, max_overflow=8, pool_pre_ping=True
    )

    @event.listens_for(engine, "connect")
    def _tune(dbapi_connection: Any, _record: Any) -> None:
        with dbapi_connection.cursor() as cursor:
            for setting in HNSW_SETTINGS:
                cursor.execute(setting)
        dbapi_connection.commit()

    return engine


HAS_PGVECTOR = text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")


def check_database(engine: Engine) -> None:
    """Fail with a clear message when the server is down or has no pgvector."""
    try:
        with engine.connect() as conn:
            available = conn.execute(HAS_PGVECTOR).first()
    except OperationalError as exc:
        raise StoreError(
            f"cannot reach PostgreSQL at {redact(str(engine.url))}: {exc.orig}"
        ) from exc
    if available is None:
        raise StoreError(
            f"the PostgreSQL server at {redact(str(engine.url))} has no 'vector' extension; "
            "install pgvector on it (https://github.com/pgvector/pgvector) or unset DATABASE_URL "
            "to use the embedded server"
        )


def alembic_config(url: str) -> Config:
    """Build an alembic Config for `url` that works from any working directory."""
    from alembic.config import Config

    config = Config(str(ALEMBIC_DIR.parent / "alembic.ini"))
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    return config


def migrate(url: str, revision: str = "head") -> None:
    """Upgrade the schema to `revision`, so every entry point runs on the current tables."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """A session in one transaction: committed on success, rolled back on error."""
    with Session(engine, expire_on_commit=False) as session, session.begin():
        yield session


SERVER_VERSION = text("SHOW server_version")


def server_version(engine: Engine) -> str:
    """The server's version number, for benchmark reports."""
    with engine.connect() as conn:
        return str(conn.execute(SERVER_VERSION).scalar()).split()[0]


#: The tables whose planner statistics and visibility maps retrieval speed depends on.
VACUUM_ANALYZE = tuple(
    text(f"VACUUM ANALYZE {table}")
    for table in (
        "passages",
        "propositions",
        "proposition_postings",
        "passage_postings",
        "unit_lexeme_frequencies",
        "entities",
        "entity_propositions",
        "entity_synonyms",
        "entity_cooccurrences",
        "entity_passages",
    )
)


CHECKPOINT = text("CHECKPOINT")


def checkpoint(engine: Engine) -> bool:
    """Write the server's dirty pages now; False where the role may not (not superuser).

    After a large load the checkpointer would otherwise write them over the next minutes, beside
    whatever is timed next.
    """
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(CHECKPOINT)
    except ProgrammingError:  # InsufficientPrivilege: CHECKPOINT needs pg_checkpoint
        return False
    return True


def vacuum_analyze(engine: Engine) -> None:
    """Fresh statistics and visibility maps, as autovacuum would give a corpus that has settled."""
    # VACUUM cannot run inside a transaction block.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for statement in VACUUM_ANALYZE:
            conn.execute(statement)
