"""`grasp bench …`: retrieval latency on a synthetic corpus (`retrieve`; the others have their own modules)."""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine

from evals.bench import concurrency as bench_concurrency
from evals.bench import faults as bench_faults
from evals.bench import index as bench_index
from evals.bench import plans as bench_plans
from evals.bench.index import cpu_model
from evals.bench.methods import (
    BENCH_METHODS,
    COLD_QUERIES,
    TARGET_COLD_P50_MS,
    TARGET_P50_MS,
    TARGET_P95_MS,
    TOP_ENTITIES,
    WARM_UP,
    link_graph_layer,
    method_step,
    time_methods,
)
from evals.bench.names import bench_corpus
from evals.bench.synthetic_corpus import (
    PER_PASSAGE,
    RANDOM_EMBEDDER,
    build,
    embed_passages,
    generate,
    queries_near_propositions,
)
from graphs.indexing.context import BULK_LOAD_MIN_PASSAGES
from graphs.models.embedders import make_embedder
from graphs.runtime.settings import Settings
from nodes.embedding import Embedder, HashingEmbedder
from store.corpora import corpus_stats, delete_corpus, ensure_corpus
from store.corpus_reads import (
    has_passage,
    proposition_counter,
)
from store.databases import database_name, database_url, ensure_database
from store.embedded import restart_embedded_server
from store.engine import make_engine, migrate, server_version, vacuum_analyze
from store.grasp_retrieval import RetrievalParams
from store.vector_indexes import build_vector_indexes, start_bulk_load

Vectors = npt.NDArray[np.float32]


def register(sub: Any) -> None:
    """Add `bench` with its sub-commands (each but `retrieve` registered by its own module)."""
    parser: argparse.ArgumentParser = sub.add_parser("bench", help="measure indexing and retrieval")
    benches = parser.add_subparsers(dest="bench", required=True, metavar="BENCH")
    retrieve = benches.add_parser(
        "retrieve", help="search_entities + RankVote latency on a synthetic corpus"
    )
    retrieve.add_argument("--propositions", type=int, default=60_000)
    retrieve.add_argument("--queries", type=int, default=200)
    retrieve.add_argument("--corpus", type=bench_corpus, default="bench-retrieve")
    retrieve.add_argument(
        "--embedder",
        choices=["random", "hash", "local"],
        default="random",
        help="random: clustered random unit vectors (default); hash or local: embed the texts",
    )
    retrieve.add_argument(
        "--method",
        nargs="+",
        choices=BENCH_METHODS,
        default=["grasp"],
        help="methods to time on the same queries (default: grasp)",
    )
    retrieve.add_argument("--seed", type=int, default=0)
    retrieve.add_argument("--rebuild", action="store_true", help="delete the corpus and build anew")
    retrieve.add_argument(
        "--cold",
        action="store_true",
        help=f"also restart the embedded server and time the first {COLD_QUERIES} queries after it",
    )
    retrieve.add_argument(
        "--scale",
        type=scale_sizes,
        metavar="N,N,…",
        help="a scale curve of the grasp step: one corpus per size (named <corpus>-6k, …), each "
        "in a database of its own on the same server, one row each (--propositions and --method "
        "are then ignored)",
    )
    retrieve.set_defaults(handler=handle_retrieve)
    bench_index.register_bench(benches)
    bench_plans.register_bench(benches)
    bench_faults.register_bench(benches)
    bench_concurrency.register_bench(benches)


def _line(label: str, values: list[float]) -> str:
    p95 = _percentile(values, 0.95)
    median, mean = statistics.median(values), statistics.fmean(values)
    return f"{label:<24}{median:>8.1f}{p95:>8.1f}{mean:>8.1f}"


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(np.ceil(share * len(ordered))) - 1)]


def _verdict(method: str, totals: list[float]) -> str:
    """The method's p50 (and p95) against its targets, if it has them."""
    p50 = statistics.median(totals)
    target = TARGET_P50_MS.get(method)
    if target is None:
        return f"{method}: p50 {p50:.1f} ms (no target)"
    verdict = f"{method}: p50 {p50:.1f} ms, target ≤ {target:.0f} ms: {_met(p50 <= target)}"
    if (p95_target := TARGET_P95_MS.get(method)) is not None:
        p95 = _percentile(totals, 0.95)
        verdict += f"; p95 {p95:.1f} ms, target ≤ {p95_target:.0f} ms: {_met(p95 <= p95_target)}"
    return verdict


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _prepare(
    engine: Engine, args: argparse.Namespace, embedder: Embedder | None
) -> tuple[int, str]:
    """The corpus id and how long its build took (or that an existing build was reused)."""
    name = RANDOM_EMBEDDER if embedder is None else embedder.name
    if args.rebuild:
        delete_corpus(engine, args.corpus)
    corpus = ensure_corpus(engine, args.corpus, name)
    existing = proposition_counter(engine, corpus)
    if existing >= max(1, args.propositions // PER_PASSAGE) * PER_PASSAGE:
        return corpus, "reused (built earlier)"
    data = generate(args.propositions, args.seed, with_vectors=embedder is None)
    if existing and not has_passage(engine, corpus, *data.passages[0]):
        raise SystemExit(
            f"corpus {args.corpus!r} holds {existing} propositions of another build; "
            "pass --rebuild or another --corpus"
        )
    started = time.perf_counter()
    # A big build skips per-row HNSW upkeep; _ready_corpus builds the indexes once, at the end.
    start_bulk_load(engine, len(data.passages) - existing // PER_PASSAGE, BULK_LOAD_MIN_PASSAGES)
    build(engine, corpus, data, embedder)
    written = time.perf_counter()
    vacuum_analyze(engine)
    vacuumed = time.perf_counter()
    return corpus, f"{written - started:.1f} s writing + {vacuumed - written:.1f} s VACUUM ANALYZE"


def scale_sizes(value: str) -> list[int]:
    """argparse type: comma-separated corpus sizes in propositions, e.g. 6000,60000,600000."""
    try:
        sizes = [int(part) for part in value.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < PER_PASSAGE:
        raise argparse.ArgumentTypeError(
            f"expected sizes like 6000,60000,600000 (each at least {PER_PASSAGE}), got {value!r}"
        )
    return sizes


def size_label(propositions: int) -> str:
    """6000 → 6k, 600000 → 600k: the suffix of a scale curve's corpus names."""
    return f"{propositions // 1000}k" if propositions % 1000 == 0 else str(propositions)


def _cold_start(
    engine: Engine, settings: Settings, corpus: int, queries: list[tuple[Vectors, str]]
) -> list[float]:
    """Restart the embedded server and time the grasp step on the first queries after it (ms)."""
    if settings.database_url:
        raise SystemExit("--cold restarts the embedded server; unset DATABASE_URL to use it")
    users = restart_embedded_server(settings.pg_data_dir)
    if users:
        raise SystemExit(
            "--cold needs the embedded server to itself; it is used by process(es) "
            + ", ".join(map(str, users))
        )
    engine.dispose()  # the pool's connections died with the old server
    step = method_step("grasp", engine, corpus, HashingEmbedder().embed)
    return [step(vector, keywords)["total"] * 1000 for vector, keywords in queries[:COLD_QUERIES]]


def _cold_line(cold: list[float]) -> str:
    p50 = statistics.median(cold)
    return (
        f"cold start: first {len(cold)} queries after a server restart p50 {p50:.1f} ms, "
        f"max {max(cold):.1f} ms, target p50 ≤ {TARGET_COLD_P50_MS:.0f} ms: "
        f"{_met(p50 <= TARGET_COLD_P50_MS)}"
    )


def _ready_corpus(
    engine: Engine, args: argparse.Namespace, embedder: Embedder | None, methods: list[str]
) -> tuple[int, str]:
    """Build or reuse the corpus, with passage vectors and (for the peers) its graph layer."""
    corpus, built = _prepare(engine, args, embedder)
    started = time.perf_counter()
    if embed_passages(engine, corpus, args.seed, embedder):
        vacuum_analyze(engine)
        built += f" + {time.perf_counter() - started:.1f} s passage vectors"
    started = time.perf_counter()
    if build_vector_indexes(engine):
        built += f" + {time.perf_counter() - started:.1f} s vector indexes"
    if set(methods) - {"grasp"}:  # the graph layer serves the peers; GRASP's step never reads it
        link_graph_layer(engine, corpus, embedder or HashingEmbedder())  # a no-op once linked
    return corpus, built


def _print(lines: list[str]) -> None:
    from graphs.cli.main import console

    for line in lines:
        console.print(line, markup=False, soft_wrap=True)


def _context_lines(engine: Engine) -> list[str]:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"hardware: {os.cpu_count()} CPUs, {cpu_model()}; PostgreSQL {server_version(engine)}; "
        f"load average {load}"
    ]


def handle_retrieve(args: argparse.Namespace) -> int:
    """Run `grasp bench retrieve`: build or reuse the corpus, time the queries, print the table."""
    from graphs.runtime.services import open_engine

    settings = Settings.from_env()
    if args.cold and settings.database_url:
        raise SystemExit("--cold restarts the embedded server; unset DATABASE_URL to use it")
    engine, _ = open_engine(settings)
    embedder = None if args.embedder == "random" else make_embedder(args.embedder)
    if args.scale:
        return _scale_curve(engine, settings, args, embedder)
    corpus, built = _ready_corpus(engine, args, embedder, args.method)
    queries = queries_near_propositions(engine, corpus, args.queries + WARM_UP, args.seed, embedder)
    cold = _cold_start(engine, settings, corpus, queries) if args.cold else None
    # PropRAG re-ranks paths by embedding their text: with random vectors, hashing stands in.
    embed = (embedder or HashingEmbedder()).embed
    timings = time_methods(args.method, engine, corpus, queries, embed)
    params = RetrievalParams()
    stats = corpus_stats(engine, args.corpus)
    _print(
        [
            f"grasp bench retrieve — corpus {args.corpus!r}, embedder "
            f"{RANDOM_EMBEDDER if embedder is None else embedder.name}",
            f"corpus: {stats.passages} passages, {stats.propositions} propositions, "
            f"{stats.entities} entities, {stats.edges} entity–proposition edges",
            f"build: {built}",
            *_context_lines(engine),
            f"queries: {args.queries} timed after {WARM_UP} warm-up; k_props={params.k_props}, "
            f"k_entities={params.k_entities}, top-{TOP_ENTITIES} entities to RankVote, "
            "query embedding excluded",
            f"{'latency (ms)':<24}{'p50':>8}{'p95':>8}{'mean':>8}",
            *(
                _line(
                    label if label == "total" and len(timings) == 1 else f"{method} {label}",
                    values,
                )
                for method, stages in timings.items()
                for label, values in stages.items()
            ),
            *(_verdict(method, stages["total"]) for method, stages in timings.items()),
            *([_cold_line(cold)] if cold is not None else []),
        ]
    )
    return 0


def _own_database(engine: Engine, settings: Settings, corpus: str) -> Engine:
    """An engine on a database of the corpus's own, created and migrated if need be.

    Corpora of one database share its HNSW indexes, and a search filtered to a small corpus walks
    past a big one's vectors: each size of the curve is measured alone (store/databases.py).
    """
    from graphs.runtime.services import resolve_database_url

    name = database_name(corpus)
    ensure_database(engine, name)
    url = database_url(resolve_database_url(settings), name)
    migrate(url)
    return make_engine(url)


def _scale_curve(
    engine: Engine, settings: Settings, args: argparse.Namespace, embedder: Embedder | None
) -> int:
    """One corpus per size, each built or reused, and one row of grasp step latencies each."""
    rows = []
    for size in args.scale:
        name = f"{args.corpus}-{size_label(size)}"
        sized = argparse.Namespace(**{**vars(args), "propositions": size, "corpus": name})
        size_engine = _own_database(engine, settings, name)
        corpus, built = _ready_corpus(size_engine, sized, embedder, ["grasp"])
        queries = queries_near_propositions(
            size_engine, corpus, args.queries + WARM_UP, args.seed, embedder
        )
        cold = _cold_start(size_engine, settings, corpus, queries) if args.cold else None
        totals = time_methods(["grasp"], size_engine, corpus, queries, HashingEmbedder().embed)
        size_engine.dispose()
        warm = totals["grasp"]["total"]
        cold_cell = f"{statistics.median(cold):>10.1f}" if cold is not None else ""
        rows.append(
            f"{size:>12,}{statistics.median(warm):>8.1f}{_percentile(warm, 0.95):>8.1f}"
            f"{cold_cell}  {built}"
        )
    cold_head = f"{'cold p50':>10}" if args.cold else ""
    _print(
        [
            f"grasp bench retrieve --scale — the grasp step, embedder "
            f"{RANDOM_EMBEDDER if embedder is None else embedder.name}, {args.queries} queries "
            f"timed after {WARM_UP} warm-up per size, each size alone in its own database"
            + (f"; cold: first {COLD_QUERIES} after a server restart" if args.cold else ""),
            *_context_lines(engine),
            f"{'propositions':>12}{'p50':>8}{'p95':>8}{cold_head}  build",
            *rows,
        ]
    )
    return 0
