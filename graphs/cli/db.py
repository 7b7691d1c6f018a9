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
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Stop the embedded server, or start and migrate the database and print its URL."""
    from graphs.cli.main import console
    from graphs.runtime.services import open_engine

    settings = Settings.from_env()
    if args.action == "stop":
        stopped = stop_embedded_server(settings.pg_data_dir)
        console.print("stopped" if stopped else "no embedded server running")
        return 0
    _, url = open_engine(settings)  # starts and migrates as a side effect
    console.print(redact(url))
    return 0
