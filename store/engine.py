"""Engine and session factory, connection checks, and schema migration through alembic."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

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


def redact(url: str) -> str:
    """Hide a password in a URL before it is printed."""
    if "@" not in url or "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    creds, host = rest.split("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in creds else url


def make_engine(url: str, pool_size: int = 8) -> Engine:
    """Create an engine whose sessions search HNSW indexes deeply enough for filtered top-k."""
    engine = create_engine(
        sqlalchemy_url(url), pool_size=pool_size, max_overflow=8, pool_pre_ping=True
    )

    @event.listens_for(engine, "connect")
    def _tune(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # ef_search must exceed the k we ask for, and filters (corpus, visited ids) need the
        # iterative scan or HNSW may return fewer rows than requested.
        with dbapi_connection.cursor() as cursor:
            cursor.execute("SET hnsw.ef_search = 100")
            cursor.execute("SET hnsw.iterative_scan = relaxed_order")
        dbapi_connection.commit()

    return engine


def check_database(engine: Engine) -> None:
    """Fail with a clear message when the server is down or has no pgvector."""
    try:
        with engine.connect() as conn:
            available = conn.execute(
                text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            ).first()
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


def alembic_config(url: str):  # type: ignore[no-untyped-def]
    """Build an alembic Config for `url` that works from any working directory."""
    from alembic.config import Config

    config = Config(str(ALEMBIC_DIR.parent / "alembic.ini"))
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(url).replace("%", "%%"))
    return config


def migrate(url: str, revision: str = "head") -> None:
    """Upgrade the schema to `revision`."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded attributes usable after commit."""
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(engine: Engine) -> Iterator[Session]:
    """A session in one transaction: committed on success, rolled back on error."""
    with Session(engine, expire_on_commit=False) as session, session.begin():
        yield session
