"""The iterative retrieve ↔ reason loop shared by IRCoT + PPR and SA-RAG + CoT.

start → retrieve (the question first, then each new reasoning sentence) → think (one sentence)
⟲ until a sentence settles the answer, repeats an earlier one, `max_steps` sentences are
written or the run's tokens reach `max_tokens` → answer from every passage retrieved, with the
sentences as notes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from graphs.agent.budget import reached, spent
from graphs.agent.state import tally
from graphs.agent.subagent import failed_calls
from graphs.peers.context import PeerContext, at_least
from graphs.peers.retrieve_answer import PeerGraph
from graphs.peers.state import PeerInput, PeerState, merged
from graphs.peers.steps import PeerSteps, Retriever, call_tag, fetch_passages
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider
from nodes.llm.client import MalformedOutput
from nodes.peers.cot import next_thought

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class CotContext(PeerContext):
    """What every retrieve ↔ reason loop is configured with."""

    max_steps: int = field(
        default=4, metadata={"description": "most reasoning sentences (one retrieval before each)"}
    )
    passages_per_step: int = field(
        default=4, metadata={"description": "passages each retrieval step adds"}
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "max_steps", "passages_per_step")


C = TypeVar("C", bound=CotContext)


class CotState(PeerState, total=False):
    """The loop's state: `notes` holds the reasoning sentences; `query` the next retrieval's."""

    query: str
    step: int
    done: bool


def next_after_think(state: CotState, context: CotContext) -> Literal["retrieve", "answer"]:
    """Retrieve again unless the answer is settled, the steps are used up or the budget is."""
    if (
        state.get("done")
        or state.get("budget_stopped")
        or state.get("step", 0) >= context.max_steps
    ):
        return "answer"
    return "retrieve"


def build_cot_loop(
    name: str,
    context_schema: type[C],
    retrieve: Retriever,
    services: Services | ServicesProvider | None,
    checkpointer: Checkpointer,
) -> PeerGraph:
    """Compile the loop around one retrieval function (called with the query, not the question)."""
    wiring = Wiring(as_provider(services), context_schema)
    steps = PeerSteps(wiring)

    async def retrieve_step(state: CotState, runtime: Runtime[C]) -> dict[str, Any]:
        """Retrieve for the latest sentence (the question at first); new passages join the set."""
        query = state.get("query") or state["question"]
        ids = await steps.retrieve(retrieve, state, runtime, query)
        return {"passages": merged(state.get("passages", []), ids)}

    async def think(state: CotState, runtime: Runtime[C]) -> dict[str, Any]:
        """One reasoning sentence over everything retrieved so far."""
        context, svc = await wiring.resolve(runtime)
        step = state.get("step", 0) + 1
        passages = await fetch_passages(svc, state.get("passages", []))
        thoughts = state.get("notes", [])
        try:
            reply, results = await next_thought(
                svc.llm,
                question=state["question"],
                passages=passages,
                thoughts=thoughts,
                max_chars=context.passage_chars(len(passages)),
                tag=call_tag("think", state, step),
            )
        except MalformedOutput as exc:
            error = f"reasoning step {step} unusable ({exc}); answered from the passages so far"
            log.warning(error)
            return {
                "step": step,
                "done": True,
                "error": error,
                "tokens": tally("think", failed_calls(exc), iteration=step),
            }
        # A repeated sentence would retrieve nothing new: the loop has stalled, so answer.
        repeated = reply.thought in thoughts
        done = reply.done or repeated
        tokens = tally("think", results, iteration=step)
        # Another step would be another reasoning call: past the budget the loop answers instead.
        more = not done and step < context.max_steps
        return {
            "step": step,
            "done": done,
            "query": reply.thought,
            "notes": thoughts if repeated else [*thoughts, reply.thought],
            "tokens": tokens,
            "budget_stopped": more
            and reached(context.max_tokens, spent(state.get("tokens"), tokens)),
        }

    def after_think(state: CotState, runtime: Runtime[C]) -> Literal["retrieve", "answer"]:
        """Route by the run's context (this peer's defaults when none was given)."""
        return next_after_think(state, runtime.context or context_schema())

    async def reset(state: CotState, runtime: Runtime[C]) -> dict[str, Any]:
        """Start afresh, the loop's own fields included."""
        return {**await steps.start(state, runtime), "query": "", "step": 0, "done": False}

    graph = StateGraph(CotState, context_schema=context_schema, input_schema=PeerInput)
    graph.add_node("start", reset)
    graph.add_node("retrieve", retrieve_step)
    graph.add_node("think", think)
    graph.add_node("answer", steps.answer)
    graph.add_edge(START, "start")
    graph.add_edge("start", "retrieve")
    graph.add_edge("retrieve", "think")
    graph.add_conditional_edges("think", after_think, ["retrieve", "answer"])
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer, name=name)
