"""Self-Ask + RAG: decompose, answer the sub-questions in order, then the final answer.

Each sub-question is answered from its own dense top-k passages and the earlier answers (which
also fill its #k placeholders); the final answer comes from the (sub-question → answer) findings.
Once the run's tokens reach `max_tokens`, the sub-questions left are not asked.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from graphs.agent.budget import reached, spent
from graphs.agent.state import TokenTally, tally
from graphs.agent.subagent import failed_calls
from graphs.peers.context import PeerContext, at_least
from graphs.peers.retrieve_answer import PeerGraph
from graphs.peers.state import PeerInput, PeerState, merged
from graphs.peers.steps import PeerSteps, call_tag, embed_one, fetch_passages
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider
from nodes.agent.plan_dag import substitute
from nodes.llm.client import MalformedOutput
from nodes.peers.answer import answer_from_findings, answer_from_passages
from nodes.peers.decompose import decompose
from store.passage_search import ranked_dense_passages

log = logging.getLogger(__name__)

#: What a sub-question whose answer call failed is recorded as.
UNKNOWN = "unknown"


@dataclass(kw_only=True)
class SelfAskContext(PeerContext):
    """A Self-Ask + RAG run's configuration."""

    k: int = field(default=5, metadata={"description": "dense passages per sub-question"})

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "k")


class SelfAskState(PeerState, total=False):
    """Self-Ask's state: the sub-questions, and the answers found so far, in order."""

    sub_questions: list[str]
    sub_answers: list[str]


def resolved(state: SelfAskState, index: int) -> str:
    """Sub-question `index` (0-based) with the earlier answers in place of its #k."""
    answers = {k: a for k, a in enumerate(state.get("sub_answers", []), start=1)}
    return substitute(state.get("sub_questions", [])[index], answers)


def after_sub_answer(state: SelfAskState) -> Literal["ask_next", "answer"]:
    """The next sub-question, or the final answer once all are answered or the budget is spent."""
    done = len(state.get("sub_answers", []))
    left = done < len(state.get("sub_questions", []))
    return "ask_next" if left and not state.get("budget_stopped") else "answer"


def stops(context: SelfAskContext, left: bool, *tallies: TokenTally | None) -> bool:
    """Whether sub-questions are `left` but the tallies have spent the budget."""
    return left and reached(context.max_tokens, spent(*tallies))


@dataclass(frozen=True)
class SelfAskNodes:
    """Self-Ask's nodes."""

    wiring: Wiring[SelfAskContext]

    async def decompose(
        self, state: SelfAskState, runtime: Runtime[SelfAskContext]
    ) -> dict[str, Any]:
        """The sub-questions (the question itself when the reply is unusable)."""
        context, services = await self.wiring.resolve(runtime)
        error = None
        try:
            subs, results = await decompose(
                services.llm, question=state["question"], tag=call_tag("decompose", state)
            )
        except MalformedOutput as exc:
            subs, results = [state["question"]], failed_calls(exc)
            error = f"decomposition unusable ({exc}); the question is asked whole"
            log.warning(error)
        tokens = tally("decompose", results)
        return {
            "sub_questions": subs,
            "sub_answers": [],
            "error": error,
            "tokens": tokens,
            "budget_stopped": stops(context, bool(subs), state.get("tokens"), tokens),
        }

    async def ask_next(
        self, state: SelfAskState, runtime: Runtime[SelfAskContext]
    ) -> dict[str, Any]:
        """Answer the next sub-question from its dense top-k and the answers before it."""
        context, services = await self.wiring.resolve(runtime)
        corpus = state.get("corpus_id")
        assert corpus is not None
        index = len(state.get("sub_answers", []))
        question = resolved(state, index)
        vector = await embed_one(services, question)
        ids = await asyncio.to_thread(
            ranked_dense_passages, services.engine, corpus, vector, context.k
        )
        passages = await fetch_passages(services, ids)
        outcome = await answer_from_passages(
            services.llm,
            question=question,
            passages=passages,
            notes=state.get("notes", []),
            max_chars=context.passage_chars(len(passages)),
            tag=call_tag("ask_next", state, index + 1),
        )
        answer = outcome.answer or UNKNOWN
        tokens = tally("ask_next", outcome.results, iteration=index + 1)
        return {
            "passages": merged(state.get("passages", []), ids),
            "sub_answers": [*state.get("sub_answers", []), answer],
            "notes": [*state.get("notes", []), f"{question} → {answer}"],
            "tokens": tokens,
            "budget_stopped": stops(
                context,
                index + 1 < len(state.get("sub_questions", [])),
                state.get("tokens"),
                tokens,
            ),
        }

    async def answer(self, state: SelfAskState, runtime: Runtime[SelfAskContext]) -> dict[str, Any]:
        """The final answer from the findings, each finding cited as a hop."""
        _, services = await self.wiring.resolve(runtime)
        outcome = await answer_from_findings(
            services.llm,
            question=state["question"],
            findings=state.get("notes", []),
            tag=call_tag("answer", state),
        )
        hops = [(resolved(state, i), a) for i, a in enumerate(state.get("sub_answers", []))]
        update: dict[str, Any] = {
            "final_answer": outcome.answer,
            "tokens": tally("answer", outcome.results),
            **await PeerSteps(self.wiring).reply(state, runtime, outcome.answer, hops),
        }
        if outcome.error:
            update["error"] = outcome.error
        return update


def build_self_ask_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile start → decompose → (ask_next ⟲ | answer) → answer."""
    wiring = Wiring(as_provider(services), SelfAskContext)
    steps = PeerSteps(wiring)
    nodes = SelfAskNodes(wiring)
    graph = StateGraph(SelfAskState, context_schema=SelfAskContext, input_schema=PeerInput)
    graph.add_node("start", steps.start)
    graph.add_node("decompose", nodes.decompose)
    graph.add_node("ask_next", nodes.ask_next)
    graph.add_node("answer", nodes.answer)
    graph.add_edge(START, "start")
    graph.add_edge("start", "decompose")
    graph.add_conditional_edges("decompose", after_sub_answer, ["ask_next", "answer"])
    graph.add_conditional_edges("ask_next", after_sub_answer, ["ask_next", "answer"])
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer, name="self_ask")


graph = build_self_ask_graph()
