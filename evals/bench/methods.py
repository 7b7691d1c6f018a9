"""Per-method timing for `grasp bench retrieve`: GRASP's step and the LLM-free peer methods."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
from sqlalchemy import Engine

from nodes.embedding import Embedder
from nodes.retrieval.methods import ppr_passages, proprag_passages, sa_rag_passages
from store.entity_graph_links import LINK_CHUNK, link_synonym_chunk, unlinked_entities
from store.grasp_retrieval import RetrievalParams, search_entities, vote_passages

Vectors = npt.NDArray[np.float32]
BENCH_METHODS = ("grasp", "ppr", "proprag", "sa-rag")
#: p50 targets on the 2-core machine (grasp: issue 12, the peers: issue 9); sa-rag has none.
TARGET_P50_MS = {"grasp": 10.0, "ppr": 50.0, "proprag": 150.0}
#: p95 targets (issue 12).
TARGET_P95_MS = {"grasp": 30.0}
#: A cold start: the first queries after a server restart, and their p50 target (issue 12).
COLD_QUERIES = 20
TARGET_COLD_P50_MS = 50.0
#: Entities GRASP's timed step hands to RankVote (as an agent's selection would).
TOP_ENTITIES = 3
WARM_UP = 20


def link_graph_layer(engine: Engine, corpus: int, embedder: Embedder) -> None:
    """Embed entity names and link synonyms, as `grasp index` does after its batches."""
    after = 0
    while todo := unlinked_entities(engine, corpus, LINK_CHUNK, after):
        missing = [entity for entity in todo if entity.needs_embedding]
        vectors = dict(
            zip([e.id for e in missing], embedder.embed([e.name for e in missing]), strict=True)
        )
        link_synonym_chunk(engine, corpus, todo, vectors)
        after = todo[-1].id


def _grasp_step(engine: Engine, corpus: int) -> Callable[[Vectors, str], dict[str, float]]:
    params = RetrievalParams()

    def step(vector: Vectors, keywords: str) -> dict[str, float]:
        t0 = time.perf_counter()
        found = search_entities(
            engine, corpus=corpus, query=vector, keywords=keywords, params=params
        )
        t1 = time.perf_counter()
        chosen = [entity["id"] for entity in found.entities[:TOP_ENTITIES]]
        vote_passages(
            engine,
            corpus=corpus,
            query=vector,
            entities=chosen,
            params=params,
            hits=found.hits,
            prior=found.prior,
        )
        t2 = time.perf_counter()
        return {"search_entities": t1 - t0, "vote_passages": t2 - t1, "total": t2 - t0}

    return step


def method_step(
    method: str, engine: Engine, corpus: int, embed: Callable[[list[str]], Vectors]
) -> Callable[[Vectors, str], dict[str, float]]:
    """One timed retrieval of `method` for a (query vector, keywords) pair, in seconds by stage."""
    if method == "grasp":
        return _grasp_step(engine, corpus)
    run: Callable[[Vectors], list[int]] = {
        "ppr": lambda v: ppr_passages(engine, corpus, v, 5),
        "proprag": lambda v: proprag_passages(engine, corpus, v, 5, embed),
        "sa-rag": lambda v: sa_rag_passages(engine, corpus, v, 5),
    }[method]

    def step(vector: Vectors, _keywords: str) -> dict[str, float]:
        started = time.perf_counter()
        run(vector)
        return {"total": time.perf_counter() - started}

    return step


def time_methods(
    methods: Sequence[str],
    engine: Engine,
    corpus: int,
    queries: Sequence[tuple[Vectors, str]],
    embed: Callable[[list[str]], Vectors],
) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per stage for each method over the same queries (after WARM_UP untimed)."""
    timings: dict[str, dict[str, list[float]]] = {}
    for method in methods:
        step = method_step(method, engine, corpus, embed)
        per_stage: dict[str, list[float]] = defaultdict(list)
        for n, (vector, keywords) in enumerate(queries):
            stages = step(vector, keywords)
            if n >= WARM_UP:
                for stage, seconds in stages.items():
                    per_stage[stage].append(seconds * 1000)
        timings[method] = dict(per_stage)
    return timings
