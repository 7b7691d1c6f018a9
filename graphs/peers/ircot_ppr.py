"""IRCoT + PPR: reasoning sentences interleaved with PPR retrieval (up to 4), then an answer.

Each step writes one chain-of-thought sentence and retrieves with it; the answer step sees every
passage retrieved.

Retrieval is the `ppr` method (HippoRAG 2-style Personalized PageRank over the entity graph,
seeded by the entities of the query's best-matching units). Our propositions (or sentences, in a
spaCy index) stand in for HippoRAG 2's triples: the seeds come from the units nearest the query,
not from triples filtered by an LLM.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.types import Checkpointer

from graphs.peers.cot_loop import CotContext, build_cot_loop
from graphs.peers.retrieve_answer import PeerGraph
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider
from nodes.retrieval.methods import ppr_passages


@dataclass(kw_only=True)
class IrcotContext(CotContext):
    """An IRCoT + PPR run's configuration (up to 4 reasoning steps, as the GRASP paper's)."""


def ppr_ids(services: Services, corpus: int, query: str, context: IrcotContext) -> list[int]:
    """PPR's best passages for the query."""
    vector = services.embedder.embed([query])[0]
    return ppr_passages(services.engine, corpus, vector, context.passages_per_step)


def build_ircot_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile the IRCoT + PPR graph."""
    return build_cot_loop("ircot_ppr", IrcotContext, ppr_ids, services, checkpointer)


graph = build_ircot_graph()
