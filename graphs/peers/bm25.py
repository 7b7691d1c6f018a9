"""BM25 RAG: the top-k passages by BM25 over passage text, one answer call."""

from __future__ import annotations

from dataclasses import dataclass, field

from langgraph.types import Checkpointer

from graphs.peers.context import PeerContext, at_least
from graphs.peers.retrieve_answer import PeerGraph, build_retrieve_answer
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider
from store.passage_search import ranked_bm25_passages


@dataclass(kw_only=True)
class Bm25Context(PeerContext):
    """A BM25 RAG run's configuration."""

    k: int = field(default=5, metadata={"description": "passages shown to the answer step"})

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "k")


def bm25_ids(services: Services, corpus: int, question: str, context: Bm25Context) -> list[int]:
    """The k passages BM25 ranks highest for the question's words."""
    return ranked_bm25_passages(services.engine, corpus, question, context.k)


def build_bm25_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile the BM25 RAG graph."""
    return build_retrieve_answer("bm25", Bm25Context, bm25_ids, services, checkpointer)


graph = build_bm25_graph()
