"""`grasp index` and `grasp stats`: build a corpus graph with a live progress bar, print its counts."""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any, get_args

from langchain_core.runnables import RunnableConfig
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from graphs.indexing.corpus_files import read_corpus
from graphs.indexing.graph import ExtractorName, IndexContext, IndexState, build_index_graph
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
    index.add_argument("--corpus", required=True, help="name space to index into")
    defaults = IndexContext()
    index.add_argument("--extractor", choices=get_args(ExtractorName), default=defaults.extractor)
    index.add_argument(
        "--batch-size",
        type=int,
        default=defaults.batch_size,
        help="passages per call (0: default)",
    )
    index.add_argument(
        "--limit", type=int, default=0, help="only the first N passages (then nothing is removed)"
    )
    index.add_argument("--concurrency", type=int, default=0, help="batches in flight (0: default)")
    index.add_argument("--retry-failed", action="store_true", help="re-extract failed passages")
    index.add_argument("--no-passage-embeddings", action="store_true", help="skip passage vectors")
    index.set_defaults(handler=handle_index)

    stats = sub.add_parser("stats", help="print a corpus's counts and indexing cost")
    stats.add_argument("--corpus", required=True)
    stats.set_defaults(handler=handle_stats)


def summary_table(summary: dict[str, Any], title: str) -> Table:
    """The end-of-run table (also used by `grasp stats`)."""
    table = Table(title=title, show_header=False)
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
    # The file's resolved path is its source: re-indexing it makes the corpus mirror it.
    state: IndexState = {
        "corpus": args.corpus,
        "passages": [{"title": p.title, "text": p.text} for p in passages],
        "source": str(args.path.resolve()),
    }
    if args.limit:
        state["limit"] = args.limit
    started = time.time()
    summary: dict[str, Any] = {}
    done = failed = pending = tokens_in = tokens_out = 0
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("indexing", total=None, detail="reading passages")
        config: RunnableConfig = {"max_concurrency": concurrency}
        async for update in graph.astream(state, config, context=context, stream_mode="updates"):
            for node, value in update.items():
                value = value or {}
                if node == "register_passages":
                    total = sum(len(b) for b in value.get("batches", []))
                    skipped = value["counters"].get("passages_skipped", 0)
                    progress.update(task, total=total, detail=f"{skipped} already indexed")
                elif node == "index_batch":
                    counters = value.get("counters", {})
                    done += counters.get("passages_done", 0)
                    failed += counters.get("passages_failed", 0)
                    pending += counters.get("passages_pending", 0)
                    tokens_in += counters.get("input_tokens", 0)
                    tokens_out += counters.get("output_tokens", 0)
                    progress.update(
                        task,
                        completed=done + failed + pending,
                        detail=f"done {done} · failed {failed} · tokens {tokens_in}/{tokens_out}",
                    )
                    for message in value.get("errors", []):
                        errors.print(f"[yellow]batch error[/]: {message}")
                elif node == "embed_passages":
                    progress.update(
                        task, detail=f"done {done} · failed {failed} · passage vectors stored"
                    )
                elif node == "link_entities":
                    progress.update(
                        task, detail=f"done {done} · failed {failed} · entity graph linked"
                    )
                elif node == "summarize":
                    summary = value["summary"]
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


def handle_index(args: argparse.Namespace) -> int:
    """Index the corpus, print its table, and say how to finish passages left pending."""
    from graphs.cli.main import console

    summary = asyncio.run(run_index(args))
    console.print(summary_table(summary, f"corpus {args.corpus}"))
    if line := source_sync_line(summary.get("this_run", {})):
        console.print(line, soft_wrap=True)
    if summary.get("passages_pending"):
        console.print(
            f"[yellow]{summary['passages_pending']} passages are still pending[/] "
            "(provider errors or an interruption): run the same command again to finish them."
        )
    return 0


def handle_stats(args: argparse.Namespace) -> int:
    """Print a corpus's counts and indexing cost from the database."""
    from graphs.cli.main import console
    from graphs.indexing.graph import corpus_summary
    from graphs.runtime.services import open_engine

    engine, _ = open_engine(Settings.from_env())
    console.print(summary_table(corpus_summary(engine, args.corpus), f"corpus {args.corpus}"))
    return 0
