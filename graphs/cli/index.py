"""`grasp index` and `grasp stats`: build a corpus graph with a live progress bar, print its counts."""

from __future__ import annotations

import argparse
import asyncio
import shlex
import time
from pathlib import Path
from typing import Any, get_args

from langchain_core.runnables import RunnableConfig
from langgraph.types import StreamMode
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from graphs.cli.corpus import shown_name
from graphs.cli.index_progress import IndexProgress
from graphs.indexing.context import ExtractorName, IndexContext
from graphs.indexing.corpus_files import CorpusFormatError, links_leaving, read_corpus
from graphs.indexing.graph import build_index_graph
from graphs.indexing.state import IndexInput
from graphs.runtime.settings import Settings

#: Batches in flight for the extractors that make no model call (spaCy, synthetic).
CPU_BATCH_CONCURRENCY = 2


def register(sub: Any) -> None:
    """Add the `index` and `stats` commands."""
    index = sub.add_parser(
        "index",
        help="index a corpus file or folder into the graph store",
        description="Index a corpus file or folder. Re-indexing the same path updates the corpus "
        "to mirror it: new and edited passages are extracted, passages the path no longer has "
        "are removed (unless another indexed path has them), unchanged ones cost nothing.",
    )
    index.add_argument(
        "path", type=Path, help="HippoRAG corpus JSON, JSON lines, or a folder of .txt/.md"
    )
    index.add_argument("--corpus", required=True, type=corpus_name, help="name space to index into")
    defaults = IndexContext()
    index.add_argument("--extractor", choices=get_args(ExtractorName), default=defaults.extractor)
    index.add_argument(
        "--batch-size",
        type=count_or_zero,
        default=defaults.batch_size,
        help="passages per call (0: default)",
    )
    index.add_argument(
        "--limit",
        type=count_or_zero,
        default=0,
        help="only the first N passages (0: all; with a limit nothing is removed)",
    )
    index.add_argument(
        "--concurrency", type=count_or_zero, default=0, help="batches in flight (0: default)"
    )
    index.add_argument("--retry-failed", action="store_true", help="re-extract failed passages")
    index.add_argument("--no-passage-embeddings", action="store_true", help="skip passage vectors")
    index.set_defaults(handler=handle_index)

    stats = sub.add_parser("stats", help="print a corpus's counts and indexing cost")
    stats.add_argument("--corpus", required=True)
    stats.set_defaults(handler=handle_stats)


def count_or_zero(raw: str) -> int:
    """An argparse type: a whole number ≥ 0 (0 means "the default" or "all")."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def corpus_name(raw: str) -> str:
    """An argparse type: a corpus name that is not empty or blank."""
    if not raw.strip():
        raise argparse.ArgumentTypeError("a corpus needs a name, got an empty one")
    return raw


def summary_table(summary: dict[str, Any], title: str) -> Table:
    """The end-of-run table (also used by `grasp stats`)."""
    table = Table(title=shown_name(title), show_header=False)
    rows = [
        (
            "passages",
            f"{summary['passages']} ({summary['passages_done']} done, "
            f"{summary['passages_failed']} failed, {summary['passages_pending']} pending)",
        ),
        ("propositions", str(summary["propositions"])),
        ("entities", str(summary["entities"])),
        ("entity–proposition edges", str(summary["edges"])),
        ("synonymy edges", str(summary["synonym_edges"])),
        (
            "co-occurrence edges",
            f"{summary['cooccurrence_edges']} entity pairs over {summary['cooccurrence_units']} units",
        ),
        ("entity–passage containment", str(summary["containment_rows"])),
        ("extraction failures", str(summary["failures"])),
        ("LLM calls", f"{summary['llm_calls']} ({summary['cached_llm_calls']} from cache)"),
        ("input / output tokens", f"{summary['input_tokens']} / {summary['output_tokens']}"),
        (
            "tokens per passage (in / out)",
            f"{summary['input_tokens_per_passage']:.0f} / {summary['output_tokens_per_passage']:.0f}",
        ),
    ]
    if "wall_time_s" in summary:
        rows.append(("wall time", f"{summary['wall_time_s']:.1f} s"))
    for key, value in rows:
        table.add_row(key, value)
    return table


async def run_index(args: argparse.Namespace) -> dict[str, Any]:
    """Stream the index graph, driving the progress bar from each batch's update."""
    from graphs.cli.main import console, errors

    passages = read_corpus(args.path)
    if skipped := links_leaving(args.path):
        errors.print(
            f"note: {skipped} linked file(s) lead out of the folder (or nowhere): skipped",
            markup=False,
        )
    context = IndexContext(
        extractor=args.extractor,
        batch_size=args.batch_size,
        embed_passages=not args.no_passage_embeddings,
        retry_failed=args.retry_failed,
    )
    settings = Settings.from_env()
    concurrency = args.concurrency or (
        settings.llm_concurrency if args.extractor == "llm" else CPU_BATCH_CONCURRENCY
    )
    graph = build_index_graph()
    # The file's resolved path is its source: re-indexing it makes the corpus mirror it. A
    # folder's passages also name their file in it, which their citations show.
    state: IndexInput = {
        "corpus": args.corpus,
        "passages": [
            {"title": p.title, "text": p.text, **({"file": p.file} if p.file else {})}
            for p in passages
        ],
        "source": str(args.path.resolve()),
    }
    if args.limit:
        state["limit"] = args.limit
    started = time.time()
    summary: dict[str, Any] = {}
    shown: set[str] = set()
    tracker = IndexProgress()
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}", markup=False),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("indexing", total=None, detail=tracker.detail)
        config: RunnableConfig = {"max_concurrency": concurrency}
        modes: list[StreamMode] = ["updates", "custom"]
        async for mode, chunk in graph.astream(state, config, context=context, stream_mode=modes):
            if mode == "custom":
                tracker.custom(chunk)
            updates = chunk if mode == "updates" and isinstance(chunk, dict) else {}
            for node, value in updates.items():
                for message in tracker.update(node, value or {}):
                    if message not in shown:  # a stopped server fails every batch alike
                        shown.add(message)
                        # soft_wrap: a long error stays one line a user (or grep) can read.
                        errors.print(f"[yellow]batch error[/]: {escape(message)}", soft_wrap=True)
                if node == "summarize":
                    summary = value["summary"]
            progress.update(
                task, total=tracker.total, completed=tracker.completed, detail=tracker.detail
            )
    summary["wall_time_s"] = time.time() - started
    return summary


def source_sync_line(counters: dict[str, int]) -> str | None:
    """What a re-index changed in the corpus, or None when it was a plain first index."""
    changed = counters.get("passages_changed", 0)
    removed = counters.get("passages_removed", 0)
    if not (changed or removed):
        return None
    new = counters.get("passages_added", 0) - changed
    unchanged = counters.get("passages_total", 0) - counters.get("passages_added", 0)
    return (
        f"updated from the file: {changed} changed, {new} new, {removed} removed, "
        f"{unchanged} unchanged"
    )


def unfinished_lines(summary: dict[str, Any], corpus: str) -> list[str]:
    """What is left undone in the corpus and how to deal with it (empty when all is done)."""
    lines = []
    quoted = shlex.quote(corpus)
    if summary.get("passages_failed"):
        lines.append(
            f"[yellow]{summary['passages_failed']} passages failed[/]: "
            f"`grasp corpus failures {escape(shown_name(quoted).plain)}` lists why; fix the file and index it "
            "again, or add --retry-failed to extract them once more."
        )
    if summary.get("passages_pending"):
        lines.append(
            f"[yellow]{summary['passages_pending']} passages are still pending[/] "
            "(provider errors or an interruption): run the same command again to finish them."
        )
    return lines


def handle_index(args: argparse.Namespace) -> int:
    """Index the corpus and print its table; exit 1 while any passage failed or is pending."""
    from graphs.cli.main import console, errors

    try:
        summary = asyncio.run(run_index(args))
    except (CorpusFormatError, FileNotFoundError) as exc:
        errors.print(f"[red]error[/]: {escape(str(exc))}", soft_wrap=True)
        return 1
    console.print(summary_table(summary, f"corpus {args.corpus}"))
    if line := source_sync_line(summary.get("this_run", {})):
        console.print(line, soft_wrap=True)
    lines = unfinished_lines(summary, args.corpus)
    for line in lines:
        console.print(line, soft_wrap=True)
    return 1 if lines else 0


def handle_stats(args: argparse.Namespace) -> int:
    """Print a corpus's counts and indexing cost from the database."""
    from graphs.cli.main import console
    from graphs.indexing.graph import corpus_summary
    from graphs.runtime.services import open_engine

    engine, _ = open_engine(Settings.from_env())
    summary = corpus_summary(engine, args.corpus)
    console.print(summary_table(summary, f"corpus {args.corpus}"))
    for line in unfinished_lines(summary, args.corpus):
        console.print(line, soft_wrap=True)
    return 0
