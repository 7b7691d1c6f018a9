"""`grasp view`: a run (or an eval results folder) as one self-contained HTML page."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import re
import webbrowser
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from graphs.runtime.checkpoints import open_checkpointer
from graphs.runtime.services import resolve_database_url
from graphs.runtime.settings import Settings
from graphs.viewer.locate import graph_for_thread
from graphs.viewer.model import LedgerSummary, RunView
from graphs.viewer.run_page import render_run
from graphs.viewer.server import server_source
from graphs.viewer.trace import NoSuchThread, build_run_view, checkpoint_loader
from store.citation_reads import cited_texts
from store.engine import make_engine
from store.ledger_reads import LedgerCall, run_calls

DEFAULT_DIR = Path("runs") / "view"
#: The eval page is built by the evals package, loaded by name (imports point evals → graphs).
EVAL_PAGE_MODULE = "evals.eval_page"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def register(sub: Any) -> None:
    """Add the `view` command."""
    view = sub.add_parser("view", help="write a run (or an eval report) as one offline HTML page")
    view.add_argument("thread", nargs="?", help="the run's thread id (see `grasp runs`)")
    view.add_argument("--eval", type=Path, metavar="DIR", help="an eval results folder instead")
    view.add_argument(
        "--out", type=Path, help="the HTML file to write (an existing one only with --force)"
    )
    view.add_argument("--force", action="store_true", help="overwrite the --out file")
    view.add_argument("--open", action="store_true", help="open the page in a browser")
    view.add_argument(
        "--server",
        metavar="URL",
        help="read THREAD from a LangGraph server's API (runs whose checkpoints are not in our "
        "database; `langgraph dev` here checkpoints into it, so plain THREAD works for those)",
    )
    view.add_argument(
        "--turn",
        type=int,
        metavar="K",
        help="a conversation thread's turn K (1 = the first); default: the latest",
    )
    view.add_argument(
        "--no-runs", action="store_true", help="with --eval: do not write the questions' run pages"
    )
    view.set_defaults(handler=run_view)


def page_name(thread: str, turn: int | None = None) -> str:
    """A file name for a thread's page (one per turn when a turn is asked for)."""
    stem = _UNSAFE.sub("-", thread).strip("-") or "run"
    return f"{stem}-turn-{turn}.html" if turn is not None else f"{stem}.html"


def ledger_summary(calls: list[LedgerCall]) -> LedgerSummary:
    """Totals over a run's ledger rows; failed attempts apart from the answers used."""
    used = [c for c in calls if not c.failed]
    failed = [c for c in calls if c.failed]
    return LedgerSummary(
        calls=len(used),
        cached=sum(1 for c in used if c.cached),
        input_tokens=sum(c.input_tokens for c in used),
        output_tokens=sum(c.output_tokens for c in used),
        latency_s=sum(c.latency_s for c in calls),
        models=sorted({c.model for c in calls}),
        failed=len(failed),
        failed_tokens=sum(c.input_tokens + c.output_tokens for c in failed),
    )


async def server_page_html(url: str, thread: str, turn: int | None = None) -> str:
    """The HTML page of a thread read over a LangGraph server's HTTP API (no ledger there)."""
    load, name = await server_source(url, thread)
    return render_run(await build_run_view(load, name, thread, turn))


async def run_page_html(database_url: str, thread: str, turn: int | None = None) -> str:
    """One run of a thread (its latest, or turn `turn`) as a page, from checkpoints and ledger."""
    async with open_checkpointer(database_url) as saver:
        name, graph = await graph_for_thread(saver, thread)
        view = await build_run_view(checkpoint_loader(graph, thread), name, thread, turn)
    engine = make_engine(database_url, pool_size=1)
    try:
        view.ledger = ledger_summary(await asyncio.to_thread(run_calls, engine, thread))
        view.cited_passages = await asyncio.to_thread(cited_passage_texts, engine, view)
    finally:
        engine.dispose()
    return render_run(view)


def cited_passage_texts(engine: Engine, view: RunView) -> dict[int, str]:
    """The texts of the passages the run's answer cites, so its page can highlight in them."""
    corpus = view.values.get("corpus_id")
    ids = sorted({int(c["passage_id"]) for c in view.citations or []})
    if not ids or not isinstance(corpus, int):
        return {}
    passages, _ = cited_texts(engine, corpus, ids)
    return {pid: p.text for pid, p in passages.items()}


def write(path: Path, html: str) -> Path:
    """Write a page, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


async def write_run_pages(database_url: str, threads: list[str], folder: Path) -> dict[str, str]:
    """Write the page of every thread that has checkpoints; thread → file name."""
    written: dict[str, str] = {}
    for thread in threads:
        try:
            html = await run_page_html(database_url, thread)
        except (NoSuchThread, LookupError):
            continue  # a method that keeps no checkpoints (closed book, dense): no run page
        written[thread] = write(folder / page_name(thread), html).name
    return written


async def view_eval(args: argparse.Namespace) -> Path:
    """The eval folder's page (and, unless --no-runs, each question's run page beside it)."""
    directory: Path = args.eval
    if not directory.is_dir():
        raise FileNotFoundError(f"no results folder {directory}")
    eval_page = importlib.import_module(EVAL_PAGE_MODULE)
    out: Path = args.out or directory / "report.html"
    links: dict[str, str] = {}
    if not args.no_runs:
        threads = eval_page.thread_ids(directory)
        if threads:
            url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
            folder = out.parent / "runs"
            names = await write_run_pages(url, threads, folder)
            links = {t: f"runs/{n}" for t, n in names.items()}
    return write(out, eval_page.render_eval_page(directory, links))


async def run_view(args: argparse.Namespace) -> int:
    """`grasp view`: write the page, print its path, open it if asked."""
    from graphs.cli.main import console, errors

    if args.out is not None and args.out.exists() and not args.force:
        errors.print(
            f"error: {args.out} already exists; add --force to overwrite it",
            markup=False,
            soft_wrap=True,
        )
        return 1
    if args.eval is not None:
        path = await view_eval(args)
    elif args.thread and args.server:
        html = await server_page_html(args.server, args.thread, args.turn)
        path = write(args.out or DEFAULT_DIR / page_name(args.thread, args.turn), html)
    elif args.thread:
        url = await asyncio.to_thread(resolve_database_url, Settings.from_env())
        html = await run_page_html(url, args.thread, args.turn)
        path = write(args.out or DEFAULT_DIR / page_name(args.thread, args.turn), html)
    else:
        raise ValueError("give a THREAD (see `grasp runs`) or --eval DIR")
    console.print(str(path.resolve()), markup=False, soft_wrap=True)
    if args.open:
        webbrowser.open(path.resolve().as_uri())
    return 0
