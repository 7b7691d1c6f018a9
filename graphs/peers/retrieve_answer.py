"""The shape of the single-shot readers (dense, BM25, PropRAG): start → retrieve → answer."""

from __future__ import annotations

from typing import Any, TypeVar

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from graphs.peers.context import PeerContext
from graphs.peers.state import PeerInput, PeerState
from graphs.peers.steps import PeerSteps, Retriever
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider

C = TypeVar("C", bound=PeerContext)

#: A compiled peer graph (the state types differ by peer; the runner reads only shared keys).
PeerGraph = CompiledStateGraph[Any, Any, Any, Any]


def build_retrieve_answer(
    name: str,
    context_schema: type[C],
    retrieve: Retriever,
    services: Services | ServicesProvider | None,
    checkpointer: Checkpointer,
) -> PeerGraph:
    """Compile start → retrieve → answer for one retrieval function."""
    wiring = Wiring(as_provider(services), context_schema)
    steps = PeerSteps(wiring)

    async def retrieve_passages(state: PeerState, runtime: Runtime[C]) -> dict[str, Any]:
        """The passages the answer step will see."""
        return {"passages": await steps.retrieve(retrieve, state, runtime, state["question"])}

    graph = StateGraph(PeerState, context_schema=context_schema, input_schema=PeerInput)
    graph.add_node("start", steps.start)
    graph.add_node("retrieve", retrieve_passages)
    graph.add_node("answer", steps.answer)
    graph.add_edge(START, "start")
    graph.add_edge("start", "retrieve")
    graph.add_edge("retrieve", "answer")
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer, name=name)
