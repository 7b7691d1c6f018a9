"""What `grasp bench retrieve` times against: its corpus built or reused, and a cold server."""

from __future__ import annotations

import argparse
import time

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine

from evals.bench.methods import COLD_QUERIES, link_graph_layer, method_step
from evals.bench.synthetic_corpus import (
    PER_PASSAGE,
    RANDOM_EMBEDDER,
    build,
    embed_passages,
    generate,
)
from graphs.indexing.context import BULK_LOAD_MIN_PASSAGES
from graphs.runtime.settings import Settings
from nodes.embedding import Embedder, HashingEmbedder
from store.corpora import delete_corpus, ensure_corpus
from store.corpus_reads import has_passage, proposition_counter
from store.databases import database_name, database_url, ensure_database
from store.embedded import restart_embedded_server
from store.engine import make_engine, migrate, vacuum_analyze
from store.vector_indexes import build_vector_indexes, start_bulk_load

Vectors = npt.NDArray[np.float32]


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
    # A big build skips per-row HNSW upkeep; ready_corpus builds the indexes once, at the end.
    start_bulk_load(engine, len(data.passages) - existing // PER_PASSAGE, BULK_LOAD_MIN_PASSAGES)
    build(engine, corpus, data, embedder)
    written = time.perf_counter()
    vacuum_analyze(engine)
    vacuumed = time.perf_counter()
    return corpus, f"{written - started:.1f} s writing + {vacuumed - written:.1f} s VACUUM ANALYZE"


def ready_corpus(
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


def cold_start(
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


def own_database(engine: Engine, settings: Settings, corpus: str) -> Engine:
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
