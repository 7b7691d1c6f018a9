"""`grasp delete` and `grasp corpus list|drop|check|failures`: remove documents cleanly, say why.

Deleting passages or whole corpora leaves no orphans; `failures` lists failed passages' reasons.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text
from sqlalchemy import Engine

from graphs.runtime.settings import Settings
from store.corpora import (
    CorpusListing,
    CorpusNotFound,
    corpus_id,
    corpus_sources,
    delete_corpus,
    is_control,
    list_corpora,
)
from store.deletion import DeletionReport, delete_passage_id, delete_titled, prune_source
from store.failures import list_failures
from store.integrity import integrity_problems

#: Sources named in the hint when `--source` matched nothing.
SOURCES_SHOWN = 3


def register(sub: Any) -> None:
    """Add the `delete` and `corpus` commands."""
    delete = sub.add_parser(
        "delete", help="delete passages (and everything derived from them) from a corpus"
    )
    delete.add_argument("--corpus", required=True, help="the corpus to delete from")
    which = delete.add_mutually_exclusive_group(required=True)
    which.add_argument("--title", help="every passage with exactly this title")
    which.add_argument("--passage-id", type=int, help="the passage with this id")
    which.add_argument(
        "--source",
        type=Path,
        help="every passage indexed from this file or folder (kept if another source has it)",
    )
    delete.set_defaults(handler=handle_delete)

    corpus: argparse.ArgumentParser = sub.add_parser("corpus", help="list, drop or check corpora")
    actions = corpus.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", help="every corpus with its size").set_defaults(handler=handle_list)
    drop = actions.add_parser("drop", help="delete a corpus and everything in it")
    drop.add_argument("name")
    drop.set_defaults(handler=handle_drop)
    check = actions.add_parser("check", help="look for orphans and drifted counters")
    check.add_argument("name")
    check.set_defaults(handler=handle_check)
    failures = actions.add_parser("failures", help="passages that failed, with the reason")
    failures.add_argument("name")
    failures.add_argument("--raw", action="store_true", help="also print the model's raw output")
    failures.set_defaults(handler=handle_failures)


def _engine() -> Engine:
    from graphs.runtime.services import open_engine

    engine, _ = open_engine(Settings.from_env())
    return engine


def _fail(message: str) -> int:
    from graphs.cli.main import errors

    errors.print(f"[red]error[/]: {escape(message)}", soft_wrap=True)
    return 1


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def deletion_line(report: DeletionReport, corpus: str) -> str:
    """One line saying what a deletion removed (and kept)."""
    line = (
        f"deleted {_count(report.passages, 'passage', 'passages')} from corpus {corpus!r}: "
        f"{_count(report.propositions, 'unit', 'units')} and "
        f"{_count(report.entities, 'entity', 'entities')} no longer mentioned anywhere"
    )
    if report.released:
        kept = _count(report.released, "passage", "passages")
        line += f"; {kept} kept because another source still has them"
    return line


def handle_delete(args: argparse.Namespace) -> int:
    """Delete by title, id or source; say what went, or that nothing matched."""
    from graphs.cli.main import console

    engine = _engine()
    try:
        corpus = corpus_id(engine, args.corpus)
    except CorpusNotFound as exc:
        return _fail(str(exc))
    if args.title is not None:
        report = delete_titled(engine, corpus, args.title)
        missing = f"no passage titled {args.title!r} in corpus {args.corpus!r}"
    elif args.passage_id is not None:
        report = delete_passage_id(engine, corpus, args.passage_id)
        missing = f"no passage with id {args.passage_id} in corpus {args.corpus!r}"
    else:
        source = str(args.source.resolve())
        report = prune_source(engine, corpus, source)
        known = corpus_sources(engine, corpus)
        shown = ", ".join(known[:SOURCES_SHOWN]) + (", …" if len(known) > SOURCES_SHOWN else "")
        missing = f"corpus {args.corpus!r} has no passages from {source}" + (
            f" (its sources: {shown})" if known else " (it records no sources)"
        )
    if not report.matched:
        return _fail(f"nothing deleted: {missing}")
    console.print(deletion_line(report, args.corpus), markup=False, soft_wrap=True)
    return 0


def shown_name(name: str) -> Text:
    """A name exactly as stored: never read as markup, its control characters escaped."""
    return Text("".join(repr(c)[1:-1] if is_control(c) else c for c in name))


def corpora_table(rows: Sequence[CorpusListing]) -> Table:
    """Every corpus with its embedder and sizes."""
    table = Table(title="corpora")
    numbers = {"passages", "units", "entities", "sources"}
    for column in ("name", "embedder", "passages", "units", "entities", "sources", "created"):
        table.add_column(column, justify="right" if column in numbers else "left")
    for row in rows:
        table.add_row(
            shown_name(row.name),
            Text(row.embedder or "-"),
            str(row.passages),
            str(row.propositions),
            str(row.entities),
            str(row.sources),
            row.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    return table


def handle_list(args: argparse.Namespace) -> int:
    """Print every corpus, or say there is none."""
    from graphs.cli.main import console

    rows = list_corpora(_engine())
    if not rows:
        console.print(
            "no corpora yet: index one with `grasp index PATH --corpus NAME`", soft_wrap=True
        )
        return 0
    console.print(corpora_table(rows))
    return 0


def handle_drop(args: argparse.Namespace) -> int:
    """Delete a whole corpus; an unknown name is an error."""
    from graphs.cli.main import console

    if not delete_corpus(_engine(), args.name):
        return _fail(f"no corpus named {args.name!r} (see `grasp corpus list`)")
    console.print(
        f"dropped corpus {args.name!r} and everything in it", markup=False, soft_wrap=True
    )
    return 0


def handle_check(args: argparse.Namespace) -> int:
    """Print each consistency check's count; exit 1 when any is non-zero."""
    from graphs.cli.main import console

    engine = _engine()
    try:
        corpus = corpus_id(engine, args.name)
    except CorpusNotFound as exc:
        return _fail(str(exc))
    problems = {name: n for name, n in integrity_problems(engine, corpus).items() if n}
    if not problems:
        console.print(
            f"corpus {args.name!r}: consistent (no orphans, counters exact)",
            markup=False,
            soft_wrap=True,
        )
        return 0
    for name, count in problems.items():
        console.print(f"{name}: {count}", markup=False, soft_wrap=True)
    return 1


def handle_failures(args: argparse.Namespace) -> int:
    """One line per failed passage (id, title, reason); exit 1 when there is any."""
    from graphs.cli.main import console

    engine = _engine()
    try:
        corpus = corpus_id(engine, args.name)
    except CorpusNotFound as exc:
        return _fail(str(exc))
    rows = list_failures(engine, corpus)
    if not rows:
        console.print(f"corpus {args.name!r}: no failed passages", markup=False, soft_wrap=True)
        return 0
    for row in rows:
        reason = " ".join(row.error.split())
        line = f"passage {row.passage_id} {row.title!r}: {reason}"
        console.print(line, markup=False, soft_wrap=True)
        if args.raw and row.raw_output:
            console.print(f"  raw output: {row.raw_output!r}", markup=False, soft_wrap=True)
    console.print(
        f"{_count(len(rows), 'failed passage', 'failed passages')}; "
        "`grasp index PATH --corpus NAME --retry-failed` extracts them once more",
        markup=False,
        soft_wrap=True,
    )
    return 1
