"""`grasp bench index`: index synthetic passages through a scripted extractor to time the non-LLM work."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import random
import time
from typing import Any

from langchain_core.runnables import RunnableConfig

from evals.bench.hardware import cpu_model
from evals.bench.names import bench_corpus
from graphs.cli.index import CPU_BATCH_CONCURRENCY
from graphs.indexing.context import IndexContext
from graphs.indexing.graph import PASSAGE_EMBEDDING_CHUNK, build_index_graph
from graphs.runtime.settings import Settings
from nodes.embedding import Embedder
from nodes.indexing.extract_synthetic import extract_one
from nodes.indexing.extraction_types import PassageInput
from store.databases import database_name, database_url, ensure_database
from store.engine import checkpoint, vacuum_analyze
from store.entity_graph_links import LINK_CHUNK

SYLLABLES = [
    "ka",
    "lo",
    "mer",
    "vin",
    "tal",
    "dor",
    "ise",
    "ran",
    "qu",
    "bel",
    "so",
    "ith",
    "ar",
    "nov",
]
#: Passages per batch: a batch's statements (lock, co-occurrence and containment edges, postings,
#: counters) cost per batch, so bigger batches spend less on them (11,656 passages with the hash
#: embedder: 47.4 s at 256, 43.6 s at 1,024).
BENCH_BATCH = 1024
#: Texts in the warm-up call before anything is timed.
WARM_UP_TEXTS = 1024
VERBS = ["was born in", "founded", "married", "directed", "moved to", "wrote about", "played for"]


def synthetic_passages(count: int, sentences: int, seed: int = 7) -> list[dict[str, str]]:
    """Wikipedia-like passages: a titled subject and facts linking it to other named things."""
    rng = random.Random(seed)
    names = ["".join(rng.choices(SYLLABLES, k=3)).capitalize() for _ in range(max(count // 2, 10))]
    passages = []
    for i in range(count):
        subject = names[i % len(names)]
        facts = [
            f"{subject} {rng.choice(VERBS)} {rng.choice(names)} in {rng.randint(1800, 2020)}."
            for _ in range(sentences)
        ]
        passages.append({"title": f"{subject} {i}", "text": " ".join(facts)})
    return passages


def size_list(value: str) -> list[int]:
    """argparse type: one passage count or several, comma-separated (a scale curve)."""
    try:
        sizes = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected counts like 1000,10000; got {value!r}"
        ) from None
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError(f"passage counts must be positive, got {value!r}")
    return sizes


def register_bench(sub: Any) -> None:
    """Add `bench index` to the bench sub-commands."""
    parser = sub.add_parser("index", help="index synthetic passages (no LLM) and time it")
    parser.add_argument(
        "--passages",
        type=size_list,
        default=[11656],
        help="passages to index; several (1000,10000,60000) print a scale curve",
    )
    parser.add_argument("--sentences", type=int, default=5, help="propositions per passage")
    parser.add_argument("--corpus", type=bench_corpus, default="bench-index")
    parser.add_argument("--batch-size", type=int, default=BENCH_BATCH)
    parser.add_argument("--concurrency", type=int, default=CPU_BATCH_CONCURRENCY)
    parser.add_argument("--no-passage-embeddings", action="store_true")
    parser.add_argument(
        "--no-embedder-alone",
        action="store_true",
        help="skip timing the embedder alone on the same texts (the floor indexing is held to)",
    )
    parser.set_defaults(handler=handle)


def embedded_texts(
    passages: list[dict[str, str]], with_passages: bool, batch: int
) -> list[list[str]]:
    """What indexing embeds, chunked as indexing embeds it.

    Each batch's propositions with its entity types (one call), then the passages, then the
    distinct entity names in the linker's chunks.
    """
    extractions = [
        extract_one(PassageInput(n, p["title"], p["text"])) for n, p in enumerate(passages)
    ]
    chunks = []
    for start in range(0, len(extractions), batch):
        part = extractions[start : start + batch]
        types = sorted({m.type for e in part for m in e.entities})
        chunks.append([s for e in part for s in e.propositions] + types)
    if with_passages:
        texts = [f"{p['title']}: {p['text']}" for p in passages]
        step = PASSAGE_EMBEDDING_CHUNK
        chunks += [texts[i : i + step] for i in range(0, len(texts), step)]
    names = sorted({m.name for e in extractions for m in e.entities})
    chunks += [names[i : i + LINK_CHUNK] for i in range(0, len(names), LINK_CHUNK)]
    return [chunk for chunk in chunks if chunk]


def embedder_alone(embedder: Embedder, chunks: list[list[str]]) -> float:
    """Seconds the embedder alone needs for the texts indexing embeds."""
    started = time.perf_counter()
    for chunk in chunks:
        embedder.embed(chunk)
    return time.perf_counter() - started


def own_store(corpus: str) -> Settings:
    """Settings whose store is a database of the bench corpus's own (created and migrated).

    In the shared store, other corpora's rows decide whether a load is big enough to rebuild the
    vector indexes once (`start_bulk_load`): the same command timed a bulk load on one machine and
    row-by-row upkeep on another. Alone, a run measures what indexing a new corpus costs.
    """
    from graphs.runtime.services import open_engine

    settings = Settings.from_env()
    engine, url = open_engine(settings)
    name = database_name(corpus)
    ensure_database(engine, name)  # services_for migrates it, as it does any store
    engine.dispose()
    return dataclasses.replace(settings, database_url=database_url(url, name))


async def run(args: argparse.Namespace, count: int) -> dict[str, Any]:
    """Index `count` synthetic passages from scratch and return the summary plus timings."""
    from graphs.runtime.services import services_for
    from store.corpora import database_size_bytes, delete_corpus

    services = services_for(await asyncio.to_thread(own_store, args.corpus))
    await asyncio.to_thread(delete_corpus, services.engine, args.corpus)
    # The last run's rows are dead tuples until vacuumed: each run starts from a settled store.
    await asyncio.to_thread(vacuum_analyze, services.engine)
    passages = synthetic_passages(count, args.sentences)
    # Model loading is not indexing: a large call, so a model that loads copies for large calls
    # (MiniLM's streams) has them all before the clock starts.
    await asyncio.to_thread(services.embedder.embed, ["warm-up"] * WARM_UP_TEXTS)
    chunks: list[list[str]] = []
    before: float | None = None
    if not args.no_embedder_alone:
        chunks = embedded_texts(passages, not args.no_passage_embeddings, args.batch_size)
        before = await asyncio.to_thread(embedder_alone, services.embedder, chunks)
    size_before = await asyncio.to_thread(database_size_bytes, services.engine)
    graph = build_index_graph(services)
    context = IndexContext(
        extractor="synthetic",
        batch_size=args.batch_size,
        embed_passages=not args.no_passage_embeddings,
    )
    config: RunnableConfig = {"max_concurrency": args.concurrency}
    started = time.perf_counter()
    state = await graph.ainvoke(
        {"corpus": args.corpus, "passages": passages}, config, context=context
    )
    elapsed = time.perf_counter() - started
    size_after = await asyncio.to_thread(database_size_bytes, services.engine)
    alone: tuple[float, float] | None = None
    if before is not None:
        # Timed again after indexing, so that a machine whose speed moved during the run shows it
        # (on one VM three runs in 20 minutes read 84, 87 and 112 s alone). The new tables are
        # vacuumed and the server's dirty pages written first, or autovacuum and the
        # checkpointer would work beside the second pass.
        await asyncio.to_thread(vacuum_analyze, services.engine)
        await asyncio.to_thread(checkpoint, services.engine)
        after = await asyncio.to_thread(embedder_alone, services.embedder, chunks)
        alone = (before, after)
    return {
        **state["summary"],
        "elapsed": elapsed,
        "embedder_alone": alone,
        "db_growth": size_after - size_before,
        "db_size": size_after,
        "embedder": services.embedder.name,
    }


def report(result: dict[str, Any]) -> list[str]:
    """The lines printed for one size."""
    seconds = result["elapsed"]
    this_run = result["this_run"]
    unit_s = this_run.get("unit_index_build_ms", 0) / 1000
    build_s = this_run.get("index_build_ms", 0) / 1000
    upkeep = (
        f"bulk load: unit vector index built beside passage embedding in {unit_s:.1f} s, "
        f"the rest at the end in {build_s:.1f} s"
        if this_run.get("bulk_load")
        else "vector indexes kept up row by row"
    )
    lines = [
        f"indexed {result['passages_done']} passages, {result['propositions']} propositions, "
        f"{result['entities']} entities, {result['edges']} edges in {seconds:.1f} s ({upkeep})",
        f"throughput: {result['passages_done'] / seconds:.0f} passages/s, "
        f"{result['propositions'] / seconds:.0f} propositions/s, "
        f"{1000 * seconds / max(result['passages_done'], 1):.2f} s per 1,000 passages",
        # Signed: re-indexing a size over an earlier run's bench corpus can shrink the database.
        f"database: {result['db_growth'] / 2**20:+.0f} MiB (total {result['db_size'] / 2**20:.0f} MiB)",
    ]
    alone = result["embedder_alone"]
    if alone is not None:
        lines.append(embedder_alone_line(seconds, *alone))
    return lines


def embedder_alone_line(seconds: float, before: float, after: float) -> str:
    """Indexing against the embedder alone, timed before indexing and again after it."""
    mean = (before + after) / 2
    return (
        f"embedder alone on the same texts: {before:.1f} s before indexing, {after:.1f} s after; "
        f"indexing = {seconds / max(mean, 1e-9):.2f} × their mean "
        f"({seconds / max(before, 1e-9):.2f} × before, {seconds / max(after, 1e-9):.2f} × after; "
        "target ≤ 1.1 for a model)"
    )


def handle(args: argparse.Namespace) -> int:
    """Run the benchmark for each size and print hardware, throughput, growth and the curve."""
    from graphs.cli.main import console

    curve = []
    for n, count in enumerate(args.passages):
        result = asyncio.run(run(args, count))
        if n == 0:
            load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
            console.print(
                f"hardware: {os.cpu_count()} cores, {cpu_model()}; embedder "
                f"{result['embedder']}; load average {load}",
                markup=False,
                soft_wrap=True,
            )
        console.print(f"— {count} passages —", markup=False)
        for line in report(result):
            console.print(line, markup=False, soft_wrap=True)
        curve.append((count, 1000 * result["elapsed"] / max(result["passages_done"], 1)))
    if len(curve) > 1:
        console.print("scale curve: passages → s per 1,000 passages", markup=False)
        for count, per_k in curve:
            console.print(
                f"  {count:>8}  {per_k:7.2f}  ({per_k / curve[0][1]:.2f} × the first)",
                markup=False,
            )
    return 0
