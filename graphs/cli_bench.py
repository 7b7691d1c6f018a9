"""`grasp bench …`: retrieval latency on a synthetic corpus (`retrieve`; `index` is graphs.bench_index)."""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine, delete, select, text

from graphs.embedders import make_embedder
from graphs.settings import Settings
from nodes.embedding import Embedder, normalise_rows
from store.corpora import add_passages, content_hash, corpus_stats, ensure_corpus
from store.engine import transaction
from store.graph_writes import ExtractedEntity, ExtractedPassage, write_extracted
from store.grasp_retrieval import RetrievalParams, search_entities, vote_passages
from store.models import (
    EMBEDDING_DIM,
    Corpus,
    Entity,
    EntityProposition,
    Passage,
    Proposition,
)

Vectors = npt.NDArray[np.float32]
RANDOM_EMBEDDER = "bench:random-clustered"
PROPOSITIONS_PER_PASSAGE = 5
PASSAGES_PER_BATCH = 200
WARM_UP = 20
TOP_ENTITIES = 3
TARGET_P50_MS = 25.0
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]  # 70 syllables


def register(sub: Any) -> None:
    """Add `bench` with its own sub-commands; `bench index` comes from graphs.bench_index if present."""
    parser: argparse.ArgumentParser = sub.add_parser("bench", help="measure indexing and retrieval")
    benches = parser.add_subparsers(dest="bench", required=True, metavar="BENCH")
    retrieve = benches.add_parser(
        "retrieve", help="search_entities + RankVote latency on a synthetic corpus"
    )
    retrieve.add_argument("--propositions", type=int, default=60_000)
    retrieve.add_argument("--queries", type=int, default=200)
    retrieve.add_argument("--corpus", default="bench-retrieve")
    retrieve.add_argument(
        "--embedder",
        choices=["random", "hash", "local"],
        default="random",
        help="random: clustered random unit vectors (default); hash or local: embed the text",
    )
    retrieve.add_argument("--seed", type=int, default=0)
    retrieve.add_argument("--rebuild", action="store_true", help="delete the corpus and build anew")
    retrieve.set_defaults(handler=handle_retrieve)
    try:
        bench_index = importlib.import_module("graphs.bench_index")
    except ModuleNotFoundError as exc:
        if exc.name != "graphs.bench_index":  # a missing dependency of it is a real error
            raise
    else:
        bench_index.register_bench(benches)


def _word(index: int, syllables: int) -> str:
    """A pronounceable made-up word, distinct for every index below 70**syllables."""
    parts = []
    for _ in range(syllables):
        index, digit = divmod(index, len(_SYLLABLES))
        parts.append(_SYLLABLES[digit])
    return "".join(parts) + "n"


def _zipf(rng: np.random.Generator, size: int, count: int, exponent: float = 1.0) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1) ** exponent
    return rng.choice(size, count, p=weights / weights.sum())


def _unit(rng: np.random.Generator, rows: int) -> Vectors:
    return normalise_rows(rng.standard_normal((rows, EMBEDDING_DIM)).astype(np.float32))


@dataclass(frozen=True)
class Synthetic:
    """A generated corpus: passages, their propositions, one entity mention each, and vectors."""

    passages: list[tuple[str, str]]
    propositions: list[list[str]]
    mentions: list[list[int]]
    names: list[str]
    vectors: Vectors | None


def generate(n_propositions: int, seed: int, with_vectors: bool) -> Synthetic:
    """Deterministic for (n, seed), so an interrupted build resumes on the same passages."""
    rng = np.random.default_rng(seed)
    n_passages = max(1, n_propositions // PROPOSITIONS_PER_PASSAGE)
    names = [_word(i, 3).capitalize() for i in range(max(1, n_propositions // 4))]
    fillers = [_word(i, 2) for i in range(3000)]
    entity = _zipf(rng, len(names), n_passages * PROPOSITIONS_PER_PASSAGE)
    filler = _zipf(rng, len(fillers), (n_passages * PROPOSITIONS_PER_PASSAGE, 6))
    propositions = [
        [
            f"{names[entity[k]]} {' '.join(fillers[f] for f in filler[k])}."
            for k in range(p * PROPOSITIONS_PER_PASSAGE, (p + 1) * PROPOSITIONS_PER_PASSAGE)
        ]
        for p in range(n_passages)
    ]
    mentions = [
        entity[p * PROPOSITIONS_PER_PASSAGE : (p + 1) * PROPOSITIONS_PER_PASSAGE].tolist()
        for p in range(n_passages)
    ]
    passages = [(f"Passage {p}", " ".join(props)) for p, props in enumerate(propositions)]
    vectors = None
    if with_vectors:
        # Topic + entity + noise: a passage's propositions share a topic (cosine ≈ 0.5), those of one
        # entity lean together (≈ 0.25), so a query near one proposition has real neighbours.
        topics = _unit(rng, max(1, n_passages // 5))
        entity_dirs = _unit(rng, len(names))
        topic_of = np.repeat(rng.integers(0, len(topics), n_passages), PROPOSITIONS_PER_PASSAGE)
        noise = _unit(rng, len(entity))
        vectors = normalise_rows(topics[topic_of] + 0.7 * entity_dirs[entity] + 0.7 * noise)
    return Synthetic(passages, propositions, mentions, names, vectors)


def _embedder(choice: str) -> tuple[str, Embedder | None]:
    if choice == "random":
        return RANDOM_EMBEDDER, None
    embedder = make_embedder(choice)
    return embedder.name, embedder


def build(engine: Engine, corpus: int, data: Synthetic, embedder: Embedder | None) -> None:
    """Write passages and their extraction through the normal write path, batch by batch."""
    for start in range(0, len(data.passages), PASSAGES_PER_BATCH):
        stop = min(start + PASSAGES_PER_BATCH, len(data.passages))
        rows = add_passages(engine, corpus, data.passages[start:stop])
        items = []
        for offset, row in enumerate(rows):
            if row.status == "done":
                continue
            index = start + offset
            statements = data.propositions[index]
            if embedder is not None:
                vectors = embedder.embed(statements)
            else:
                assert data.vectors is not None
                first = index * PROPOSITIONS_PER_PASSAGE
                vectors = data.vectors[first : first + len(statements)]
            positions: dict[int, list[int]] = defaultdict(list)
            for position, entity in enumerate(data.mentions[index]):
                positions[entity].append(position)
            entities = [
                ExtractedEntity(data.names[e], "Thing", tuple(ps)) for e, ps in positions.items()
            ]
            items.append(ExtractedPassage(row.id, statements, vectors, entities))
        if items:
            write_extracted(engine, corpus, items)


def _n_propositions(engine: Engine, corpus: int) -> int:
    with transaction(engine) as session:
        return int(
            session.execute(select(Corpus.n_propositions).where(Corpus.id == corpus)).one()[0]
        )


def _queries(
    engine: Engine, corpus: int, count: int, seed: int, embedder: Embedder | None
) -> list[tuple[Vectors, str]]:
    """Query vectors near sampled propositions + three keywords: the proposition's own entity and
    two drawn per edge (so popular entities come up as often as in the corpus).
    """
    rng = np.random.default_rng(seed + 1)
    with transaction(engine) as session:
        ids = session.execute(
            select(Proposition.id).where(Proposition.corpus_id == corpus).order_by(Proposition.id)
        ).scalars()
        chosen = rng.choice(np.fromiter(ids, dtype=np.int64), count, replace=False).tolist()
        rows = session.execute(
            select(Proposition.id, Proposition.text, Proposition.embedding).where(
                Proposition.id.in_(chosen)
            )
        ).all()
        edge_names = session.execute(
            select(EntityProposition.proposition_id, Entity.name)
            .join(Entity, Entity.id == EntityProposition.entity_id)
            .where(Entity.corpus_id == corpus)
        ).all()
    own = {pid: name for pid, name in edge_names}
    by_id = {row[0]: row for row in rows}
    ordered = [by_id[pid] for pid in chosen]
    if embedder is not None:
        vectors = embedder.embed([" ".join(row[1].split()[:4]) for row in ordered])
    else:
        base = np.stack([np.asarray(row[2], dtype=np.float32) for row in ordered])
        vectors = normalise_rows(base + 0.5 * _unit(rng, len(ordered)))
    picks = rng.integers(0, len(edge_names), (len(ordered), 2))
    return [
        (vectors[i], " ".join([own.get(row[0], ""), *(edge_names[j][1] for j in picks[i])]))
        for i, row in enumerate(ordered)
    ]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _line(label: str, values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(np.ceil(0.95 * len(ordered))) - 1)]
    return (
        f"{label:<18}{statistics.median(ordered):>8.1f}{p95:>8.1f}{statistics.fmean(ordered):>8.1f}"
    )


def handle_retrieve(args: argparse.Namespace) -> int:
    from graphs.cli import console
    from graphs.services import open_engine

    engine, _ = open_engine(Settings.from_env())
    embedder_name, embedder = _embedder(args.embedder)
    if args.rebuild:
        with transaction(engine) as session:
            session.execute(delete(Corpus).where(Corpus.name == args.corpus))
    corpus = ensure_corpus(engine, args.corpus, embedder_name)
    existing = _n_propositions(engine, corpus)
    wanted = max(1, args.propositions // PROPOSITIONS_PER_PASSAGE) * PROPOSITIONS_PER_PASSAGE
    build_s: float | None = None
    if existing < wanted:
        data = generate(args.propositions, args.seed, with_vectors=embedder is None)
        if existing and not _holds(engine, corpus, data.passages[0]):
            raise SystemExit(
                f"corpus {args.corpus!r} holds {existing} propositions of another build; "
                "pass --rebuild or another --corpus"
            )
        started = time.perf_counter()
        build(engine, corpus, data, embedder)
        _vacuum_analyze(engine)
        build_s = time.perf_counter() - started
    queries = _queries(engine, corpus, args.queries + WARM_UP, args.seed, embedder)
    params = RetrievalParams()
    timings: dict[str, list[float]] = defaultdict(list)
    for n, (vector, keywords) in enumerate(queries):
        t0 = time.perf_counter()
        found = search_entities(engine, corpus, vector, keywords, params)
        t1 = time.perf_counter()
        vote_passages(engine, vector, [e.id for e in found.entities[:TOP_ENTITIES]], params)
        t2 = time.perf_counter()
        if n >= WARM_UP:
            timings["search_entities"].append((t1 - t0) * 1000)
            timings["vote_passages"].append((t2 - t1) * 1000)
            timings["total"].append((t2 - t0) * 1000)
    stats = corpus_stats(engine, args.corpus)
    with engine.connect() as conn:
        server = str(conn.execute(text("SHOW server_version")).scalar()).split()[0]
    p50 = statistics.median(timings["total"])
    built = "reused (built earlier)" if build_s is None else f"{build_s:.1f} s"
    for line in (
        f"grasp bench retrieve — corpus {args.corpus!r}, embedder {embedder_name}",
        f"corpus: {stats.passages} passages, {stats.propositions} propositions, "
        f"{stats.entities} entities, {stats.edges} entity–proposition edges",
        f"build: {built}",
        f"hardware: {os.cpu_count()} CPUs, {_cpu_model()}; PostgreSQL {server}",
        f"queries: {args.queries} timed after {WARM_UP} warm-up; k_props={params.k_props}, "
        f"k_entities={params.k_entities}, top-{TOP_ENTITIES} entities to RankVote, "
        "query embedding excluded",
        f"{'latency (ms)':<18}{'p50':>8}{'p95':>8}{'mean':>8}",
        *(_line(label, values) for label, values in timings.items()),
        f"target p50 ≤ {TARGET_P50_MS:.0f} ms: {'met' if p50 <= TARGET_P50_MS else 'MISSED'}",
    ):
        console.print(line, markup=False, soft_wrap=True)
    return 0


def _holds(engine: Engine, corpus: int, passage: tuple[str, str]) -> bool:
    with transaction(engine) as session:
        found = session.execute(
            select(Passage.id).where(
                Passage.corpus_id == corpus, Passage.content_hash == content_hash(*passage)
            )
        ).first()
    return found is not None


def _vacuum_analyze(engine: Engine) -> None:
    # Fresh statistics and visibility maps, as autovacuum would give a corpus that has settled.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in ("passages", "propositions", "entities", "entity_propositions"):
            conn.execute(text(f"VACUUM ANALYZE {table}"))
