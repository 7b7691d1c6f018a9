"""`grasp db …`: start, stop and locate the embedded database."""

from __future__ import annotations

import argparse
from typing import Any

from graphs.runtime.settings import Settings
from store.embedded import stop_embedded_server
from store.engine import redact


def register(sub: Any) -> None:
    """Add the `db` command."""
    parser: argparse.ArgumentParser = sub.add_parser("db", help="manage the database")
    parser.add_argument("action", choices=["url", "migrate", "stop"])
    parser.add_argument(
        "--force", action="store_true", help="stop: even while other grasp commands use it"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Stop the embedded server, or start and migrate the database and print its URL."""
    from graphs.cli.main import console
    from graphs.runtime.services import open_engine

    settings = Settings.from_env()
    if args.action == "stop":
        return stop(settings, force=args.force)
    if args.action == "url" and settings.database_url:
        # Shown without connecting: a user whose server is down still sees where it points.
        console.print(redact(settings.database_url))
        return 0
    _, url = open_engine(settings)  # starts and migrates as a side effect
    console.print(redact(url))
    return 0


def stop(settings: Settings, *, force: bool) -> int:
    """Stop the embedded server and say what really happened."""
    from graphs.cli.main import console, errors

    if settings.database_url:
        errors.print("DATABASE_URL is set: grasp only stops its own embedded server")
        return 1
    outcome = stop_embedded_server(settings.pg_data_dir, force=force)
    if outcome.users and not outcome.stopped:
        pids = ", ".join(str(pid) for pid in outcome.users)
        errors.print(f"not stopped: grasp commands still use it (pid {pids}); add --force")
        return 1
    if not outcome.was_running:
        console.print("no embedded server running")
        return 0
    if not outcome.stopped:
        errors.print(f"the server over {settings.pg_data_dir} did not stop; see its log there")
        return 1
    console.print("stopped")
    return 0
