"""The `grasp` command line: each sub-command lives in its own module and registers itself here."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import warnings
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from store.engine import is_disk_full, redact

#: Modules that add sub-commands. `evals.commands` (`grasp eval*`) and `evals.bench.commands`
#: (`grasp bench …`) are loaded by name, not imported statically, because imports point one way
#: (evals → graphs) and the CLI must not depend on the evals package.
COMMAND_MODULES = (
    "graphs.cli.index",
    "graphs.cli.ask",
    "graphs.cli.fork",
    "graphs.cli.chat",
    "evals.bench.commands",
    "graphs.cli.db",
    "graphs.cli.corpus",
    "graphs.cli.view",
    "evals.commands",
)

console = Console(stderr=False, highlight=False)
errors = Console(stderr=True, highlight=False)

Handler = Callable[[argparse.Namespace], Coroutine[Any, Any, int] | int]


def build_parser() -> argparse.ArgumentParser:
    """Collect every registered sub-command."""
    parser = argparse.ArgumentParser(
        prog="grasp", description="GRASP: graph agentic search over propositions."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # an optional command module that is not there
                continue
            raise
        module.register(sub)
    return parser


def run_handler(handler: Handler, args: argparse.Namespace) -> int:
    """Run a sync or async command handler and return its exit code."""
    outcome = handler(args)
    if asyncio.iscoroutine(outcome):
        return int(asyncio.run(outcome))
    return int(outcome)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `grasp` console script."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG)
    else:
        # Warnings (a retried provider call) are news for the user, not a log record.
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
        # psycopg warns while closing a connection the server already dropped; the failure
        # itself reaches the user as one line.
        logging.getLogger("psycopg").setLevel(logging.ERROR)
    try:
        return run_handler(args.handler, args)
    except KeyboardInterrupt:
        # Tasks cut off mid-flight leave coroutines that never ran; their warning is noise here.
        warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
        errors.print(
            "[yellow]interrupted[/]: finished work is saved; run the same command again to continue"
        )
        return 130
    except Exception as exc:  # every failure reaches the user as one clear line, not a trace
        if args.verbose:
            raise
        errors.print(f"[red]error[/]: {escape(one_line(exc))}", soft_wrap=True)
        return 1


def one_line(exc: BaseException) -> str:
    """A failure as one line, with no secret of a database URL in it.

    A full disk or an unreachable database says so (drivers' texts span lines).
    """
    if is_disk_full(exc):
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        reason = redact(cause[0].strip()) if cause else ""
        return (
            f"the database's disk is full: {reason}; free space where it keeps its data "
            "(`grasp db url` shows which database), then run the same command again"
        )
    if type(exc).__name__ == "OperationalError":  # sqlalchemy's or psycopg's
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        reason = redact(cause[0].strip()) if cause else ""
        return f"the database cannot be reached: {reason} (`grasp db url` shows where it points)"
    text = redact(" ".join(str(exc).split()))
    return f"{type(exc).__name__}: {text}"
