"""PRISM (paper 004): Question Analyzer → Selector (precision) ↔ Adder (recall) → Answer Generator.

Candidates are the top dense passages for the question and for each sub-question, merged and
de-duplicated. Each round the Selector picks, among the candidates not kept yet, those that
directly support the question; the Adder then adds what the kept set still lacks. The kept set is
the union over rounds; the loop stops after `max_rounds` (the paper's N = 3), or earlier when a
round keeps nothing new, or once the run's tokens reach `max_tokens`. `kept` in the final state
is the evidence set, for retrieval precision and recall.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from graphs.agent.budget import reached, spent
from graphs.agent.state import TokenTally, tally
from graphs.agent.subagent import failed_calls
from graphs.peers.context import PeerContext, at_least
from graphs.peers.retrieve_answer import PeerGraph
from graphs.peers.state import PeerInput, PeerState, merged
from graphs.peers.steps import PeerSteps, call_tag, fetch_passages
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider
from nodes.llm.client import LlmResult, MalformedOutput
from nodes.peers.decompose import decompose
from nodes.peers.prism import Agent, pick_evidence
from store.passage_search import ranked_dense_passages

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class PrismContext(PeerContext):
    """A PRISM run's configuration (defaults: the paper's)."""

    candidates_per_query: int = field(
        default=20,
        metadata={"description": "dense passages fetched for the question and each sub-question"},
    )
    max_rounds: int = field(default=3, metadata={"description": "N: most Selector ↔ Adder rounds"})
    # Not the paper's: a bound for small models, which otherwise list every number they are shown.
    max_picks: int = field(
        default=10,
        metadata={
            "description": "most passages one Selector or Adder reply may name (the local model "
            "is held to it by its grammar)"
        },
    )
    # Not the paper's (it had large windows): a 4-hop question's pool of up to 100 passages
    # overflowed the local model's 8,192 tokens; 16,000 characters are about 4,000 tokens.
    prompt_chars: int = field(
        default=16_000,
        metadata={
            "description": "the Selector's, Adder's and answer's passages fit in this many "
            "characters together (each cut shorter when there are many); 0 = no limit"
        },
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        at_least(self, 1, "candidates_per_query", "max_rounds", "max_picks")


class PrismState(PeerState, total=False):
    """PRISM's state: sub-questions, the candidate pool, the kept set and the round."""

    sub_questions: list[str]
    #: Candidate passage ids, question's first, each once; prompts number them from 1.
    candidates: list[int]
    #: Kept candidate ids, in candidate order (also written to `passages`).
    kept: list[int]
    round: int
    #: How many candidates the current round has kept so far (0 after both agents: converged).
    new_this_round: int


def not_kept(state: PrismState) -> list[int]:
    """1-based numbers of the candidates not kept yet."""
    kept = set(state.get("kept", []))
    return [n for n, pid in enumerate(state.get("candidates", []), start=1) if pid not in kept]


def kept_numbers(state: PrismState) -> list[int]:
    """1-based numbers of the kept candidates."""
    kept = set(state.get("kept", []))
    return [n for n, pid in enumerate(state.get("candidates", []), start=1) if pid in kept]


def with_kept(state: PrismState, numbers: list[int]) -> list[int]:
    """The kept set plus the candidates numbered `numbers`, in candidate order."""
    candidates = state.get("candidates", [])
    keep = set(state.get("kept", [])) | {candidates[n - 1] for n in numbers}
    return [pid for pid in candidates if pid in keep]


def another_round(state: PrismState, context: PrismContext) -> bool:
    """Whether rounds are left, the last one kept something, and candidates remain."""
    more = state.get("round", 0) < context.max_rounds and state.get("new_this_round", 0) > 0
    return more and bool(not_kept(state))


def after_adder(state: PrismState, runtime: Runtime[PrismContext]) -> Literal["select", "answer"]:
    """Another round while one is due and the budget allows it."""
    context = runtime.context or PrismContext()
    due = another_round(state, context) and not state.get("budget_stopped")
    return "select" if due else "answer"


def unless_stopped(state: PrismState) -> Literal["select", "add", "answer"]:
    """After the analyzer or the Selector: the next agent, or the answer past the budget."""
    if state.get("budget_stopped"):
        return "answer"
    return "add" if state.get("round", 0) else "select"


def stops(context: PrismContext, state: PrismState, tokens: TokenTally, follows: bool) -> bool:
    """Whether another agent call `follows` but the run's tokens have reached the budget."""
    return follows and reached(context.max_tokens, spent(state.get("tokens"), tokens))


@dataclass(frozen=True)
class PrismNodes:
    """PRISM's own nodes."""

    wiring: Wiring[PrismContext]

    async def analyze(self, state: PrismState, runtime: Runtime[PrismContext]) -> dict[str, Any]:
        """The Question Analyzer: sub-questions (the question itself when the reply is unusable)."""
        context, services = await self.wiring.resolve(runtime)
        error = None
        try:
            subs, results = await decompose(
                services.llm, question=state["question"], tag=call_tag("analyze", state)
            )
        except MalformedOutput as exc:
            subs, results = [state["question"]], failed_calls(exc)
            error = f"analysis unusable ({exc}); the question is its own sub-question"
            log.warning(error)
        tokens = tally("analyze", results)
        return {
            "sub_questions": subs,
            "error": error,
            "tokens": tokens,
            "budget_stopped": stops(context, state, tokens, True),
        }

    async def gather(self, state: PrismState, runtime: Runtime[PrismContext]) -> dict[str, Any]:
        """Candidates: the top dense passages of the question and of each sub-question."""
        context, services = await self.wiring.resolve(runtime)
        corpus = state.get("corpus_id")
        assert corpus is not None
        queries = [state["question"], *state.get("sub_questions", [])]
        vectors = await asyncio.to_thread(services.embedder.embed, queries)
        pool: list[int] = []
        for vector in vectors:
            ids = await asyncio.to_thread(
                ranked_dense_passages,
                services.engine,
                corpus,
                vector,
                context.candidates_per_query,
            )
            pool = merged(pool, ids)
        return {"candidates": pool, "kept": [], "passages": [], "round": 0, "new_this_round": 0}

    async def select(self, state: PrismState, runtime: Runtime[PrismContext]) -> dict[str, Any]:
        """The Selector: keep the not-yet-kept candidates that directly support the question."""
        context, services = await self.wiring.resolve(runtime)
        round_ = state.get("round", 0) + 1
        picked, results = await self._ask("select", state, round_, context, services)
        kept = with_kept(state, picked)
        tokens = tally("select", results, iteration=round_)
        left = len(kept) < len(state.get("candidates", []))  # the Adder has some to judge
        return {
            "round": round_,
            "kept": kept,
            "passages": kept,
            "new_this_round": len(picked),
            "tokens": tokens,
            "budget_stopped": stops(context, state, tokens, left),
        }

    async def add(self, state: PrismState, runtime: Runtime[PrismContext]) -> dict[str, Any]:
        """The Adder: add the remaining candidates that fill a gap in the kept set."""
        context, services = await self.wiring.resolve(runtime)
        round_ = state.get("round", 1)
        added, results = await self._ask("add", state, round_, context, services)
        kept = with_kept(state, added)
        tokens = tally("add", results, iteration=round_)
        update: dict[str, Any] = {
            "kept": kept,
            "passages": kept,
            "new_this_round": state.get("new_this_round", 0) + len(added),
        }
        due = another_round(cast(PrismState, {**state, **update}), context)
        return {**update, "tokens": tokens, "budget_stopped": stops(context, state, tokens, due)}

    async def _ask(
        self,
        node: Agent,
        state: PrismState,
        round_: int,
        context: PrismContext,
        services: Services,
    ) -> tuple[list[int], list[LlmResult]]:
        offered = not_kept(state)
        if not offered:
            return [], []  # nothing left to judge: no call
        candidates = await fetch_passages(services, state.get("candidates", []))
        try:
            return await pick_evidence(
                services.llm,
                node,
                question=state["question"],
                sub_questions=state.get("sub_questions", []),
                candidates=candidates,
                kept=kept_numbers(state),
                offered=offered,
                max_chars=context.passage_chars(len(candidates)),
                most=context.max_picks,
                tag=call_tag(node, state, round_),
            )
        except MalformedOutput as exc:
            log.warning("PRISM %s round %d: reply unusable (%s); nothing taken", node, round_, exc)
            return [], failed_calls(exc)


def build_prism_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> PeerGraph:
    """Compile start → analyze → gather → (select → add)×≤N → answer (sooner past the budget)."""
    wiring = Wiring(as_provider(services), PrismContext)
    steps = PeerSteps(wiring)
    nodes = PrismNodes(wiring)
    graph = StateGraph(PrismState, context_schema=PrismContext, input_schema=PeerInput)
    graph.add_node("start", steps.start)
    graph.add_node("analyze", nodes.analyze)
    graph.add_node("gather", nodes.gather)
    graph.add_node("select", nodes.select)
    graph.add_node("add", nodes.add)
    graph.add_node("answer", steps.answer)
    graph.add_edge(START, "start")
    graph.add_edge("start", "analyze")
    graph.add_edge("analyze", "gather")
    graph.add_conditional_edges("gather", unless_stopped, ["select", "answer"])
    graph.add_conditional_edges("select", unless_stopped, ["add", "answer"])
    graph.add_conditional_edges("add", after_adder, ["select", "answer"])
    graph.add_edge("answer", END)
    return graph.compile(checkpointer=checkpointer, name="prism")


graph = build_prism_graph()
