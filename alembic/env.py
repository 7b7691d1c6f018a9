"""Alembic environment: migrates the GRASP schema on the URL given by store.engine or DATABASE_URL."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine, pool

from store.engine import sqlalchemy_url
from store.schema import metadata

config = context.config
target_metadata = metadata

#: Created and migrated by langgraph-checkpoint-postgres's own `setup()` (graphs/runtime/checkpoints.py),
#: in the same database: alembic must neither drop them nor report them as drift.
LANGGRAPH_TABLES = frozenset(
    {"checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"}
)


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Leave the LangGraph checkpointer's tables out of autogenerate comparisons."""
    return not (type_ == "table" and name in LANGGRAPH_TABLES)


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
    if not url:
        raise RuntimeError("set DATABASE_URL or sqlalchemy.url to run alembic")
    return sqlalchemy_url(url)


def run_migrations_offline() -> None:
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        include_name=include_name,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection, target_metadata=target_metadata, include_name=include_name
        )
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
