"""`grasp bench index`: index synthetic passages through a scripted extractor to time the non-LLM work."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import time
from typing import Any

from langchain_core.runnables import RunnableConfig

from graphs.cli.bench_names import bench_corpus
from graphs.cli.index import CPU_BATCH_CONCURRENCY
from graphs.indexing.graph import IndexContext, build_index_graph
from graphs.runtime.settings import Settings

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


def cpu_model() -> str:
    """The processor's name, for the printed hardware line."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def register_bench(sub: Any) -> None:
    """Add `bench index` to the bench sub-commands."""
    parser = sub.add_parser("index", help="index synthetic passages (no LLM) and time it")
    parser.add_argument("--passages", type=int, default=11656)
    parser.add_argument("--sentences", type=int, default=5, help="propositions per passage")
    parser.add_argument("--corpus", type=bench_corpus, default="bench-index")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=CPU_BATCH_CONCURRENCY)
    parser.add_argument("--no-passage-embeddings", action="store_true")
    parser.set_defaults(handler=handle)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Index the synthetic corpus from scratch and return the summary plus timings."""
    from graphs.runtime.services import services_for
    from store.corpora import database_size_bytes, delete_corpus

    services = services_for(Settings.from_env())
    await asyncio.to_thread(delete_corpus, services.engine, args.corpus)
    passages = synthetic_passages(args.passages, args.sentences)
    await asyncio.to_thread(services.embedder.embed, ["warm-up"])  # model load is not indexing
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
    return {
        **state["summary"],
        "elapsed": elapsed,
        "db_growth": size_after - size_before,
        "db_size": size_after,
        "embedder": services.embedder.name,
    }


def handle(args: argparse.Namespace) -> int:
    """Run the benchmark and print the hardware, throughput and database growth."""
    from graphs.cli.main import console

    result = asyncio.run(run(args))
    seconds = result["elapsed"]
    console.print(
        f"hardware: {os.cpu_count()} cores, {cpu_model()}; embedder {result['embedder']}\n"
        f"indexed {result['passages_done']} passages, {result['propositions']} propositions, "
        f"{result['entities']} entities, {result['edges']} edges in {seconds:.1f} s\n"
        f"throughput: {result['passages_done'] / seconds:.0f} passages/s, "
        f"{result['propositions'] / seconds:.0f} propositions/s\n"
        f"database: +{result['db_growth'] / 2**20:.0f} MiB (total {result['db_size'] / 2**20:.0f} MiB)"
    )
    return 0
