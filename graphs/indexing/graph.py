"""The indexing pipeline as a LangGraph graph.

register → parallel batches → side by side: passage vectors, the unit vector index (after a bulk
load) and the graph layer → the passage vector index → summary.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from sqlalchemy import Engine

from graphs.indexing.context import IndexContext
from graphs.indexing.embed_ahead import embed_and_write
from graphs.indexing.passage_intake import (
    given_files,
    given_passages,
    reject_unstorable,
    source_key,
    sync_counts,
)
from graphs.indexing.state import BatchTask, IndexInput, IndexState
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider, check_may_index
from nodes.indexing.extract import LlmExtractor
from nodes.indexing.extract_spacy import SpacyExtractor
from nodes.indexing.extract_synthetic import SyntheticExtractor
from nodes.indexing.extraction_types import Extractor, PassageInput
from nodes.indexing.index_batch import BatchReport, index_batch
from nodes.indexing.link_entities import LinkReport, link_entities
from store.corpora import corpus_id, corpus_stats, ensure_corpus
from store.failures import reset_failures
from store.graph_writes import passages_without_embedding, set_passage_embeddings
from store.ledger import corpus_token_totals
from store.source_writes import add_source_passages
from store.vector_indexes import (
    BUILD_WORKERS,
    UNIT_INDEX,
    build_vector_indexes,
    start_bulk_load,
)

#: Passages embedded per embedder call and write when whole passages get their vectors.
PASSAGE_EMBEDDING_CHUNK = 512

IndexGraph = CompiledStateGraph[IndexState, IndexContext, IndexInput, IndexState]


def corpus_summary(engine: Engine, corpus: str) -> dict[str, Any]:
    """Counts of a corpus plus its indexing tokens from the ledger (cached calls included)."""
    stats = corpus_stats(engine, corpus)
    tokens = corpus_token_totals(engine, corpus_id(engine, corpus))
    done = max(stats.passages_done, 1)
    return {
        **stats.__dict__,
        "llm_calls": tokens.calls,
        "cached_llm_calls": tokens.cached_calls,
        "input_tokens": tokens.input_tokens,
        "output_tokens": tokens.output_tokens,
        "input_tokens_per_passage": tokens.input_tokens / done,
        "output_tokens_per_passage": tokens.output_tokens / done,
    }


def make_extractor(context: IndexContext, services: Services) -> Extractor:
    """The extractor named by the context."""
    if context.extractor == "llm":
        return LlmExtractor(services.extractor_llm, max_passage_chars=context.max_passage_chars)
    if context.extractor == "spacy":
        return SpacyExtractor()
    return SyntheticExtractor()


#: What follows the batches, side by side: none needs another's output, and running them together
#: keeps both cores busy (the embedder, a serial index build, the synonym searches).
AFTER_BATCHES = ["embed_passages", "build_unit_index", "link_entities"]


def fan_out(state: IndexState) -> list[Send] | list[str]:
    """One `index_batch` task per batch, run in parallel; straight on when nothing is left to do."""
    if not state.get("batches"):
        return AFTER_BATCHES
    return [
        Send("index_batch", BatchTask(corpus_id=state["corpus_id"], passages=batch))
        for batch in state["batches"]
    ]


@dataclass(frozen=True)
class IndexNodes:
    """The index graph's nodes, each (state, runtime) → partial update."""

    wiring: Wiring[IndexContext]

    async def register_passages(
        self, state: IndexState, runtime: Runtime[IndexContext]
    ) -> dict[str, Any]:
        """Store the passages and split the distinct ones still to extract into batches."""
        context, services = await self.wiring.resolve(runtime)
        # The index graph names its corpus in its input, not its context: check it here too,
        # with the run's user (an admin's act over the server, see auth.py).
        check_may_index(state["corpus"], services.settings.allowed_corpora)
        pairs, files = given_passages(state), given_files(state)
        limit = state.get("limit", 0)
        if limit < 0:
            raise ValueError(f"limit must be 0 (all passages) or positive, got {limit}")
        if limit:
            pairs, files = pairs[:limit], files[:limit]
        corpus_id = await asyncio.to_thread(
            ensure_corpus, services.engine, state["corpus"], services.embedder.name
        )
        source = source_key(state)
        mirror = source is not None and not limit
        rows, pruned = await asyncio.to_thread(
            add_source_passages,
            services.engine,
            corpus_id,
            pairs,
            source,
            mirror=mirror,
            files=files,
        )
        synced = sync_counts(rows, pruned) if mirror else {}
        rejected = await asyncio.to_thread(
            reject_unstorable, services.engine, corpus_id, pairs, rows
        )
        wanted = {"pending", "failed"} if context.retry_failed else {"pending"}
        seen: set[int] = set(rejected)
        todo: list[dict[str, Any]] = []
        for row in rows:
            if row.status in wanted and row.id not in seen:
                seen.add(row.id)
                todo.append({"id": row.id, "title": row.title, "text": row.text})
        if context.retry_failed:
            # A retried passage's old failure rows go: it ends with its latest outcome only.
            retried = [t["id"] for t in todo]
            await asyncio.to_thread(reset_failures, services.engine, corpus_id, retried)
        size = context.batch_size or make_extractor(context, services).default_batch_size
        batches = [todo[i : i + size] for i in range(0, len(todo), size)]
        bulk = await asyncio.to_thread(
            start_bulk_load, services.engine, len(todo), context.bulk_load_min_passages
        )
        already = len({row.id for row in rows}) - len(todo)
        return {
            "corpus_id": corpus_id,
            "started_at": time.time(),
            "batches": batches,
            "counters": {
                "passages_total": len({row.id for row in rows}),
                "passages_skipped": already,
                "passages_added": sum(row.added for row in rows),
                "passages_rejected": len(rejected),
                "bulk_load": int(bulk),
                **synced,
            },
        }

    async def run_batch(self, task: BatchTask, runtime: Runtime[IndexContext]) -> dict[str, Any]:
        """Extract, embed and write one batch; its failures become counters, never exceptions."""
        context, services = await self.wiring.resolve(runtime)
        passages = [PassageInput(p["id"], p["title"], p["text"]) for p in task["passages"]]
        report: BatchReport = await index_batch(
            services,
            make_extractor(context, services),
            corpus_id=task["corpus_id"],
            passages=passages,
            type_threshold=context.type_threshold,
        )
        counters = {k: v for k, v in report.__dict__.items() if isinstance(v, int)}
        return {"counters": counters, "errors": [report.error] if report.error else []}

    async def embed_passages(
        self, state: IndexState, runtime: Runtime[IndexContext]
    ) -> dict[str, Any]:
        """Embed whole passages that have no vector yet (the dense baselines search them)."""
        context, services = await self.wiring.resolve(runtime)
        if not context.embed_passages:
            return {}
        todo = await asyncio.to_thread(
            passages_without_embedding, services.engine, state["corpus_id"]
        )
        chunks = [
            todo[i : i + PASSAGE_EMBEDDING_CHUNK]
            for i in range(0, len(todo), PASSAGE_EMBEDDING_CHUNK)
        ]
        progress = get_stream_writer()  # `grasp index` shows the vectors stored so far
        stored = [0]

        def written(chunk: list[tuple[int, str]]) -> None:
            stored[0] += len(chunk)
            progress({"event": "passage_vectors", "stored": stored[0], "total": len(todo)})

        await embed_and_write(
            chunks,
            lambda chunk: services.embedder.embed([t for _, t in chunk]),
            lambda chunk, vectors: set_passage_embeddings(
                services.engine, [i for i, _ in chunk], vectors
            ),
            written,
        )
        return {"counters": {"passages_embedded": len(todo)}}

    async def build_unit_index(
        self, state: IndexState, runtime: Runtime[IndexContext]
    ) -> dict[str, Any]:
        """Build the unit vector index a bulk load dropped, while the passages are embedded.

        Beside a local embedder the build takes no parallel workers: its CPU is about the same
        either way (58k MiniLM units on two cores: 28 core-seconds serial, 27 with two workers),
        and the embedder's streams already keep the cores busy, so workers would only add
        processes contending for them. Beside a remote or hashing embedder, whose cores are
        free, it takes the usual workers.
        """
        context, services = await self.wiring.resolve(runtime)
        beside_model = context.embed_passages and services.embedder.cpu_bound
        workers = 0 if beside_model else BUILD_WORKERS
        return await self._build(services, "unit_index_build_ms", [UNIT_INDEX], workers)

    async def build_indexes(
        self, state: IndexState, runtime: Runtime[IndexContext]
    ) -> dict[str, Any]:
        """Build whatever vector index is still missing (a catalog lookup when none is)."""
        _, services = await self.wiring.resolve(runtime)
        return await self._build(services, "index_build_ms", None, BUILD_WORKERS)

    @staticmethod
    async def _build(
        services: Services, timer: str, only: list[str] | None, workers: int
    ) -> dict[str, Any]:
        started = time.perf_counter()
        built = await asyncio.to_thread(build_vector_indexes, services.engine, only, workers)
        if not built:
            return {}
        elapsed_ms = round((time.perf_counter() - started) * 1000)
        return {"counters": {"vector_indexes_built": len(built), timer: elapsed_ms}}

    async def link_entities(
        self, state: IndexState, runtime: Runtime[IndexContext]
    ) -> dict[str, Any]:
        """Embed new entity names and link synonyms: the graph layer's resumable last step."""
        context, services = await self.wiring.resolve(runtime)
        started = time.perf_counter()
        report: LinkReport = await link_entities(
            services, state["corpus_id"], threshold=context.synonym_threshold
        )
        elapsed_ms = round((time.perf_counter() - started) * 1000)
        return {"counters": {**report.__dict__, "link_entities_ms": elapsed_ms}}

    async def summarize(self, state: IndexState, runtime: Runtime[IndexContext]) -> dict[str, Any]:
        """The corpus's counts and tokens, this run's counters, and its first errors."""
        _, services = await self.wiring.resolve(runtime)
        summary = await asyncio.to_thread(corpus_summary, services.engine, state["corpus"])
        summary["wall_time_s"] = time.time() - state.get("started_at", time.time())
        summary["this_run"] = dict(state.get("counters", {}))
        summary["errors"] = state.get("errors", [])[:5]
        return {"summary": summary}


def build_index_graph(services: Services | ServicesProvider | None = None) -> IndexGraph:
    """Compile the index graph.

    `services`: fixed Services (tests, benchmarks), a provider called with each run's
    IndexContext, or None to build them from the environment at run time (the dev server, the CLI).
    """
    nodes = IndexNodes(Wiring(as_provider(services), IndexContext))
    graph = StateGraph(IndexState, context_schema=IndexContext, input_schema=IndexInput)
    graph.add_node("register_passages", nodes.register_passages)
    # mypy cannot match `type[BatchTask]` (a TypedDict class) to LangGraph's TypedDictLike bound.
    graph.add_node("index_batch", nodes.run_batch, input_schema=BatchTask)  # type: ignore[call-overload]
    graph.add_node("embed_passages", nodes.embed_passages)
    graph.add_node("build_unit_index", nodes.build_unit_index)
    graph.add_node("build_indexes", nodes.build_indexes)
    graph.add_node("link_entities", nodes.link_entities)
    graph.add_node("summarize", nodes.summarize)
    graph.add_edge(START, "register_passages")
    graph.add_conditional_edges("register_passages", fan_out, ["index_batch", *AFTER_BATCHES])
    for step in AFTER_BATCHES:
        graph.add_edge("index_batch", step)
    graph.add_edge(AFTER_BATCHES, "build_indexes")
    graph.add_edge("build_indexes", "summarize")
    graph.add_edge("summarize", END)
    return graph.compile(name="index")


#: What langgraph.json exports: no checkpointer (the server brings one); services are resolved from
#: the environment at each run, so importing this module touches nothing.
graph = build_index_graph()
