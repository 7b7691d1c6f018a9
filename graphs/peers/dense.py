"""Dense RAG: the top-k passages by passage-embedding cosine to the question, one answer call."""

from __future__ import annotations

from dataclasses import dataclass, field

from langgraph.types import Checkpointer

from graphs.peers.context import PeerContext, at_least
from graphs.peers.retrieve_answer import PeerGraph, build_retrieve_answer
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider
from store.passage_search import ranked_dense_passages


@dataclass(kw_only=True)
class DenseContext(PeerContext):
    """A dense RAG run's configuration."""

    k: int = field(default=5, metadata={"description": "passages shown to the answer step"})

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "k")


def dense_ids(services: Services, corpus: int, question: str, context: DenseContext) -> list[int]:
    """The k passages nearest the question."""
    query = services.embedder.embed([question])[0]
    return ranked_dense_passages(services.engine, corpus, query, context.k)


def build_dense_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile the dense RAG graph (services and checkpointer as for the GRASP graph)."""
    return build_retrieve_answer("dense", DenseContext, dense_ids, services, checkpointer)


graph = build_dense_graph()
