"""No context: the model answers closed-book, reading no corpus (the floor every method must beat)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from graphs.agent.state import tally
from graphs.peers.context import PeerContext
from graphs.peers.retrieve_answer import PeerGraph
from graphs.peers.state import PeerInput, PeerState
from graphs.peers.steps import PeerSteps, call_tag
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider
from nodes.peers.answer import answer_closed_book


@dataclass(kw_only=True)
class NoContextContext(PeerContext):
    """A closed-book run's configuration (the corpus is named but never read)."""


def build_no_context_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile start → answer (closed-book)."""
    wiring = Wiring(as_provider(services), NoContextContext)
    steps = PeerSteps(wiring, needs_corpus=False)

    async def answer(state: PeerState, runtime: Runtime[NoContextContext]) -> dict[str, Any]:
        """One closed-book answer call."""
        _, svc = await wiring.resolve(runtime)
        outcome = await answer_closed_book(
            svc.llm, question=state["question"], tag=call_tag("answer", state)
        )
        update: dict[str, Any] = {
            "final_answer": outcome.answer,
            "tokens": tally("answer", outcome.results),
            **await steps.reply(state, runtime, outcome.answer),  # no passages: no sources
        }
        if outcome.error:
            update["error"] = outcome.error
        return update

    graph = StateGraph(PeerState, context_schema=NoContextContext, input_schema=PeerInput)
    graph.add_node("start", steps.start)
    graph.add_node("answer", answer)
    graph.add_edge(START, "start")
    graph.add_edge("start", "answer")
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer, name="no_context")


graph = build_no_context_graph()
