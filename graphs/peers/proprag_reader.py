"""PropRAG reader: PropRAG's LLM-free retrieval and one answer call, as in the paper.

The retrieval is a beam search over proposition paths between two PPR passes
(nodes/retrieval/proprag.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langgraph.types import Checkpointer

from graphs.peers.context import PeerContext, at_least
from graphs.peers.retrieve_answer import PeerGraph, build_retrieve_answer
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider
from nodes.retrieval.methods import proprag_passages


@dataclass(kw_only=True)
class PropRagContext(PeerContext):
    """A PropRAG reader run's configuration (the search itself keeps the paper's defaults)."""

    k: int = field(default=5, metadata={"description": "passages shown to the answer step"})

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "k")


def proprag_ids(
    services: Services, corpus: int, question: str, context: PropRagContext
) -> list[int]:
    """PropRAG's k best passages for the question."""
    embed = services.embedder.embed
    return proprag_passages(services.engine, corpus, embed([question])[0], context.k, embed)


def build_proprag_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile the PropRAG reader graph."""
    return build_retrieve_answer(
        "proprag_reader", PropRagContext, proprag_ids, services, checkpointer
    )


graph = build_proprag_graph()
