"""SA-RAG + CoT: spreading-activation retrieval inside a chain-of-thought loop of at most 3 steps.

Retrieval is the `sa-rag` method (nodes/retrieval/spreading_activation.py): our entities stand in
for SA-RAG's, their units for its entity descriptions, and entity pairs sharing a unit (that unit
as the text) for its relations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langgraph.types import Checkpointer

from graphs.peers.context import at_least
from graphs.peers.cot_loop import CotContext, build_cot_loop
from graphs.peers.retrieve_answer import PeerGraph
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider
from nodes.retrieval.methods import sa_rag_passages
from nodes.retrieval.spreading_activation import SpreadingParams


@dataclass(kw_only=True)
class SaRagCotContext(CotContext):
    """An SA-RAG + CoT run's configuration (the activation thresholds keep the paper's values)."""

    max_steps: int = field(default=3, metadata={"description": "most reasoning steps"})
    seed_entities: int = field(
        default=SpreadingParams.seed_k,
        metadata={"description": "k: seed entities, by the cosine of their units to the query"},
    )
    hops: int = field(
        default=SpreadingParams.hops,
        metadata={"description": "n: radius of the neighbourhood activation spreads over"},
    )
    activation_threshold: float = field(
        default=SpreadingParams.tau_a,
        metadata={"description": "τ_a: entities above this activation are activated"},
    )
    passage_threshold: float = field(
        default=SpreadingParams.tau_d,
        metadata={"description": "τ_d: kept passages have at least this cosine to the query"},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "seed_entities")
        at_least(self, 0, "hops")

    def spreading(self) -> SpreadingParams:
        """The spreading-activation parameters of this run."""
        return SpreadingParams(
            seed_k=self.seed_entities,
            hops=self.hops,
            tau_a=self.activation_threshold,
            tau_d=self.passage_threshold,
        )


def sa_rag_ids(services: Services, corpus: int, query: str, context: SaRagCotContext) -> list[int]:
    """SA-RAG's best passages for the query."""
    vector = services.embedder.embed([query])[0]
    return sa_rag_passages(
        services.engine, corpus, vector, context.passages_per_step, context.spreading()
    )


def build_sa_rag_cot_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile the SA-RAG + CoT graph."""
    return build_cot_loop("sa_rag_cot", SaRagCotContext, sa_rag_ids, services, checkpointer)


graph = build_sa_rag_cot_graph()
