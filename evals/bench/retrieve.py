"""`grasp bench retrieve`: retrieval latency on a synthetic corpus, one size or a scale curve."""

from __future__ import annotations

import argparse
import itertools
import statistics
from typing import Any

from sqlalchemy import Engine

from evals.bench.ann_recall import RECALL_K, RECALL_QUERIES, ann_recall
from evals.bench.methods import BENCH_METHODS, COLD_QUERIES, TOP_ENTITIES, WARM_UP, time_methods
from evals.bench.names import bench_corpus
from evals.bench.report import (
    cold_line,
    context_lines,
    latency_line,
    percentile,
    print_lines,
    verdict,
)
from evals.bench.retrieve_setup import cold_start, own_database, ready_corpus
from evals.bench.synthetic_corpus import PER_PASSAGE, RANDOM_EMBEDDER, queries_near_propositions
from graphs.models.embedders import make_embedder
from graphs.runtime.settings import Settings
from nodes.embedding import Embedder, HashingEmbedder
from store.corpora import corpus_stats
from store.grasp_retrieval import RetrievalParams


def register_bench(benches: Any) -> None:
    """Add `grasp bench retrieve` to the `bench` sub-commands."""
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
    corpus, built = ready_corpus(engine, args, embedder, args.method)
    queries = queries_near_propositions(engine, corpus, args.queries + WARM_UP, args.seed, embedder)
    cold = cold_start(engine, settings, corpus, queries) if args.cold else None
    # PropRAG re-ranks paths by embedding their text: with random vectors, hashing stands in.
    embed = (embedder or HashingEmbedder()).embed
    timings = time_methods(args.method, engine, corpus, queries, embed)
    params = RetrievalParams()
    stats = corpus_stats(engine, args.corpus)
    print_lines(
        [
            f"grasp bench retrieve — corpus {args.corpus!r}, embedder "
            f"{RANDOM_EMBEDDER if embedder is None else embedder.name}",
            f"corpus: {stats.passages} passages, {stats.propositions} propositions, "
            f"{stats.entities} entities, {stats.edges} entity–proposition edges",
            f"build: {built}",
            *context_lines(engine),
            f"queries: {args.queries} timed after {WARM_UP} warm-up; k_props={params.k_props}, "
            f"k_entities={params.k_entities}, top-{TOP_ENTITIES} entities to RankVote, "
            "query embedding excluded",
            f"{'latency (ms)':<24}{'p50':>8}{'p95':>8}{'mean':>8}",
            *(
                latency_line(
                    label if label == "total" and len(timings) == 1 else f"{method} {label}",
                    values,
                )
                for method, stages in timings.items()
                for label, values in stages.items()
            ),
            *(verdict(method, stages["total"]) for method, stages in timings.items()),
            *([cold_line(cold)] if cold is not None else []),
        ]
    )
    return 0


def _scale_curve(
    engine: Engine, settings: Settings, args: argparse.Namespace, embedder: Embedder | None
) -> int:
    """One corpus per size, each built or reused, and one row of grasp step latencies each."""
    rows: list[str] = []
    medians: list[float] = []
    for size in args.scale:
        name = f"{args.corpus}-{size_label(size)}"
        sized = argparse.Namespace(**{**vars(args), "propositions": size, "corpus": name})
        size_engine = own_database(engine, settings, name)
        corpus, built = ready_corpus(size_engine, sized, embedder, ["grasp"])
        queries = queries_near_propositions(
            size_engine, corpus, args.queries + WARM_UP, args.seed, embedder
        )
        cold = cold_start(size_engine, settings, corpus, queries) if args.cold else None
        totals = time_methods(["grasp"], size_engine, corpus, queries, HashingEmbedder().embed)
        timed = [vector for vector, _ in queries[WARM_UP : WARM_UP + RECALL_QUERIES]]
        recall = ann_recall(size_engine, corpus, timed)
        size_engine.dispose()
        stages = totals["grasp"]
        warm = stages["total"]
        medians.append(statistics.median(warm))
        cold_cell = f"{statistics.median(cold):>10.1f}" if cold is not None else ""
        rows.append(
            f"{size:>12,}{medians[-1]:>8.1f}{percentile(warm, 0.95):>8.1f}"
            f"{statistics.median(stages['search_entities']):>10.1f}"
            f"{statistics.median(stages['vote_passages']):>8.1f}{recall:>10.3f}{cold_cell}  {built}"
        )
    cold_head = f"{'cold p50':>10}" if args.cold else ""
    print_lines(
        [
            f"grasp bench retrieve --scale — the grasp step, embedder "
            f"{RANDOM_EMBEDDER if embedder is None else embedder.name}, {args.queries} queries "
            f"timed after {WARM_UP} warm-up per size, each size alone in its own database"
            + "; search (hybrid search + entity scores) and vote (RankVote): its halves' p50"
            + f"; ANN R@{RECALL_K}: the units' HNSW top-{RECALL_K} (the step's search settings)"
            + f" against an exact scan's, first {RECALL_QUERIES} timed queries"
            + (f"; cold: first {COLD_QUERIES} after a server restart" if args.cold else ""),
            *context_lines(engine),
            f"{'propositions':>12}{'p50':>8}{'p95':>8}{'search':>10}{'vote':>8}"
            f"{'ANN R@' + str(RECALL_K):>10}{cold_head}  build",
            *rows,
            *growth_lines(args.scale, medians),
        ]
    )
    return 0


def growth_lines(sizes: list[int], medians: list[float]) -> list[str]:
    """How each size's p50 compares with the size before it: cost against corpus growth."""
    points = list(zip(sizes, medians, strict=True))
    return [
        f"{size_label(big)} against {size_label(small)}: {big / small:g}× the propositions, "
        f"{after / before:.2f}× the p50"
        for (small, before), (big, after) in itertools.pairwise(points)
        if before > 0
    ]
