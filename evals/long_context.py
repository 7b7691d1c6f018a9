"""The extended-context setting: one small graph per LongBench sample, its indexing billed to it."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence

from langchain_core.runnables import RunnableConfig

from evals.attribution_facts import NO_PASSAGES
from evals.loaders import LongBenchSample
from evals.qa_run import Prepare, QaItem, QaRun
from evals.qa_runner import GRAPH_METHODS
from graphs.indexing.context import ExtractorName, IndexContext
from graphs.indexing.corpus_files import SourcePassage
from graphs.indexing.graph import build_index_graph
from graphs.indexing.state import IndexState
from graphs.runtime.services import Services
from store.corpora import ensure_corpus
from store.graph_writes import passages_without_embedding, set_passage_embeddings
from store.ledger import corpus_token_totals
from store.passage_writes import add_passages

CORPUS_PREFIX = "lb-"
_SLUG = re.compile(r"[^A-Za-z0-9]+")


def sample_corpus_name(sample_id: str) -> str:
    """A stable corpus name per sample: readable prefix plus a hash, so ids never collide."""
    slug = _SLUG.sub("-", sample_id).strip("-")[:40] or "sample"
    digest = hashlib.sha1(sample_id.encode()).hexdigest()[:8]
    return f"{CORPUS_PREFIX}{slug}-{digest}"


def long_items(samples: Sequence[LongBenchSample]) -> list[QaItem]:
    """Each sample as a question over its own corpus (LongBench has no hop counts)."""
    return [
        QaItem(s.id, s.question, s.answers, None, s.dataset, sample_corpus_name(s.id))
        for s in samples
    ]


def _embed_missing(services: Services, corpus: int) -> None:
    todo = passages_without_embedding(services.engine, corpus)
    if todo:
        vectors = services.embedder.embed([text for _, text in todo])
        set_passage_embeddings(services.engine, [pid for pid, _ in todo], vectors)


def _store_passages(services: Services, name: str, passages: Sequence[SourcePassage]) -> None:
    # Methods that read passages only need them and their vectors: no extraction, no tokens.
    corpus = ensure_corpus(services.engine, name, services.embedder.name)
    add_passages(services.engine, corpus, [(p.title, p.text) for p in passages])
    _embed_missing(services, corpus)


def make_prepare(
    run: QaRun, samples: Sequence[LongBenchSample], extractor: ExtractorName = "llm"
) -> Prepare:
    """Index a sample's passages before its question; return the sample's indexing tokens.

    The methods that read the proposition graph (GRAPH_METHODS: GRASP, IRCoT + PPR, SA-RAG,
    PropRAG) build it (the index graph skips passages done before, so a rerun costs nothing
    more) and are billed every indexing call of the sample's corpus. The other methods only
    store and embed the passages; the closed-book method needs nothing.
    """
    services = run.services
    passages = {sample_corpus_name(s.id): s.passages for s in samples}
    graph = build_index_graph(services)
    context = IndexContext(extractor=extractor)

    async def prepare(item: QaItem) -> float:
        name = item.corpus
        if run.method in NO_PASSAGES or name is None:
            return 0.0
        if run.method not in GRAPH_METHODS:
            await asyncio.to_thread(_store_passages, services, name, passages[name])
            return 0.0
        state: IndexState = {
            "corpus": name,
            "passages": [{"title": p.title, "text": p.text} for p in passages[name]],
        }
        config: RunnableConfig = {"max_concurrency": services.settings.llm_concurrency}
        result = await graph.ainvoke(state, config, context=context)
        summary = result["summary"]
        if summary["passages_pending"]:
            raise RuntimeError(
                f"{summary['passages_pending']} passages of {name} are still pending "
                f"({'; '.join(summary['errors']) or 'provider errors'}); run again to finish them"
            )
        totals = await asyncio.to_thread(
            corpus_token_totals, services.engine, int(result["corpus_id"])
        )
        return float(totals.input_tokens + totals.output_tokens)

    return prepare
