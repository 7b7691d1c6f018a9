"""The indexing pipeline as a LangGraph graph: register passages → batches in parallel → summary."""

from __future__ import annotations

import asyncio
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from sqlalchemy import Engine

from graphs.indexing.corpus_files import read_corpus
from graphs.runtime.services import Services, services_for
from graphs.runtime.settings import Settings
from nodes.indexing.extract import LlmExtractor
from nodes.indexing.extract_spacy import SpacyExtractor
from nodes.indexing.extract_synthetic import SyntheticExtractor
from nodes.indexing.extraction_types import Extractor, PassageInput
from nodes.indexing.index_batch import BatchReport, index_batch
from store.corpora import add_passages, corpus_id, corpus_stats, ensure_corpus
from store.entities import DEFAULT_TYPE_THRESHOLD
from store.graph_writes import passages_without_embedding, set_passage_embeddings
from store.ledger import corpus_token_totals

ExtractorName = Literal["llm", "spacy", "synthetic"]


@dataclass(kw_only=True)
class IndexContext:
    """Indexing settings (LangGraph Studio shows and edits these)."""

    extractor: ExtractorName = field(
        default="llm",
        metadata={
            "description": "llm (joint propositions + entities), spacy (sentences + NER, no tokens) or synthetic (benchmarks)"
        },
    )
    batch_size: int = field(
        default=0,
        metadata={
            "description": "passages per extraction call; 0 = the extractor's default (llm 5, spacy 64)"
        },
    )
    type_threshold: float = field(
        default=DEFAULT_TYPE_THRESHOLD,
        metadata={"description": "type-embedding cosine needed to merge same-named entities"},
    )
    embed_passages: bool = field(
        default=True,
        metadata={"description": "also embed whole passages (the dense baselines need them)"},
    )
    retry_failed: bool = field(
        default=False, metadata={"description": "extract passages that failed before once more"}
    )
    max_passage_chars: int = field(
        default=6000,
        metadata={"description": "longer passages are extracted alone, in sentence-aligned pieces"},
    )
    chat_model: str | None = field(
        default=None, metadata={"description": "override GRASP_CHAT_MODEL for the llm extractor"}
    )


def add_reports(left: dict[str, int], right: dict[str, int]) -> dict[str, int]:
    """Sum counters key by key (parallel batches write here)."""
    return {key: left.get(key, 0) + right.get(key, 0) for key in {*left, *right}}


class IndexState(TypedDict, total=False):
    """Input: corpus and passages (or a source path). Output: counters and the summary."""

    corpus: str
    passages: list[dict[str, str]]
    source_path: str
    limit: int
    corpus_id: int
    started_at: float
    batches: list[list[dict[str, Any]]]
    counters: Annotated[dict[str, int], add_reports]
    errors: Annotated[list[str], operator.add]
    summary: dict[str, Any]


class BatchTask(TypedDict):
    """What one parallel batch receives."""

    corpus_id: int
    passages: list[dict[str, Any]]


ServicesProvider = Callable[[IndexContext], Services]


def default_services(context: IndexContext) -> Services:
    """Services from the environment (what the dev server and the CLI use)."""
    settings = Settings.from_env()
    if context.chat_model:
        settings = replace(settings, chat_model=context.chat_model)
    return services_for(settings)


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


def build_index_graph(
    services: Services | ServicesProvider | None = None,
) -> CompiledStateGraph[IndexState, IndexContext, IndexState, IndexState]:
    """Compile the index graph; `services` may be fixed (tests) or resolved per run."""
    provide: ServicesProvider
    if services is None:
        provide = default_services
    elif isinstance(services, Services):
        fixed = services
        provide = lambda _context: fixed  # noqa: E731
    else:
        provide = services

    async def register_passages(
        state: IndexState, runtime: Runtime[IndexContext]
    ) -> dict[str, Any]:
        context = runtime.context or IndexContext()
        svc = provide(context)
        source = state.get("passages")
        if source is None and state.get("source_path"):
            source = [
                {"title": p.title, "text": p.text} for p in read_corpus(Path(state["source_path"]))
            ]
        pairs = [(p.get("title", ""), p.get("text", "")) for p in source or []]
        if state.get("limit"):
            pairs = pairs[: state["limit"]]
        corpus_id = await asyncio.to_thread(
            ensure_corpus, svc.engine, state["corpus"], svc.embedder.name
        )
        rows = await asyncio.to_thread(add_passages, svc.engine, corpus_id, pairs)
        wanted = {"pending", "failed"} if context.retry_failed else {"pending"}
        seen: set[int] = set()
        todo = []
        for row in rows:
            if row.status in wanted and row.id not in seen:
                seen.add(row.id)
                todo.append({"id": row.id, "title": row.title, "text": row.text})
        size = context.batch_size or make_extractor(context, svc).default_batch_size
        batches = [todo[i : i + size] for i in range(0, len(todo), size)]
        already = len({row.id for row in rows}) - len(todo)
        return {
            "corpus_id": corpus_id,
            "started_at": time.time(),
            "batches": batches,
            "counters": {
                "passages_total": len({row.id for row in rows}),
                "passages_skipped": already,
            },
        }

    def fan_out(state: IndexState) -> list[Send] | Literal["embed_passages"]:
        if not state.get("batches"):
            return "embed_passages"
        return [
            Send("index_batch", BatchTask(corpus_id=state["corpus_id"], passages=batch))
            for batch in state["batches"]
        ]

    async def run_batch(task: BatchTask, runtime: Runtime[IndexContext]) -> dict[str, Any]:
        context = runtime.context or IndexContext()
        svc = provide(context)
        passages = [PassageInput(p["id"], p["title"], p["text"]) for p in task["passages"]]
        report: BatchReport = await index_batch(
            svc, make_extractor(context, svc), task["corpus_id"], passages, context.type_threshold
        )
        counters = {k: v for k, v in report.__dict__.items() if isinstance(v, int)}
        return {"counters": counters, "errors": [report.error] if report.error else []}

    async def embed_passages(state: IndexState, runtime: Runtime[IndexContext]) -> dict[str, Any]:
        context = runtime.context or IndexContext()
        if not context.embed_passages:
            return {}
        svc = provide(context)
        todo = await asyncio.to_thread(passages_without_embedding, svc.engine, state["corpus_id"])
        for start in range(0, len(todo), 512):
            chunk = todo[start : start + 512]
            vectors = await asyncio.to_thread(svc.embedder.embed, [t for _, t in chunk])
            await asyncio.to_thread(
                set_passage_embeddings, svc.engine, [i for i, _ in chunk], vectors
            )
        return {"counters": {"passages_embedded": len(todo)}}

    async def summarize(state: IndexState, runtime: Runtime[IndexContext]) -> dict[str, Any]:
        svc = provide(runtime.context or IndexContext())
        summary = await asyncio.to_thread(corpus_summary, svc.engine, state["corpus"])
        summary["wall_time_s"] = time.time() - state.get("started_at", time.time())
        summary["this_run"] = dict(state.get("counters", {}))
        summary["errors"] = state.get("errors", [])[:5]
        return {"summary": summary}

    graph = StateGraph(IndexState, context_schema=IndexContext)
    graph.add_node("register_passages", register_passages)
    graph.add_node("index_batch", run_batch, input_schema=BatchTask)  # type: ignore[call-overload,arg-type]
    graph.add_node("embed_passages", embed_passages)
    graph.add_node("summarize", summarize)
    graph.add_edge(START, "register_passages")
    graph.add_conditional_edges("register_passages", fan_out, ["index_batch", "embed_passages"])
    graph.add_edge("index_batch", "embed_passages")
    graph.add_edge("embed_passages", "summarize")
    graph.add_edge("summarize", END)
    return graph.compile(name="index")


#: What langgraph.json exports: no checkpointer (the server brings one); services are resolved from
#: the environment at each run, so importing this module touches nothing.
graph = build_index_graph()
