"""The GRASP sub-agent: a compiled subgraph that answers one sub-question (spec §2.2)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from graphs.agent.budget import reached, spent
from graphs.agent.context import GraspContext, chosen
from graphs.agent.hop_end import bridge_end, finished, left_to_reader
from graphs.agent.hop_reads import RoundRead
from graphs.agent.progress import emit
from graphs.agent.state import (
    Observation,
    ObservationLog,
    SubAgentInput,
    SubAgentOutput,
    SubAgentState,
)
from graphs.agent.token_events import reported_tally as tally  # each call also a "tokens" event
from graphs.runtime.wiring import Wiring, run_id
from nodes.agent.evaluate import UNKNOWN, EvaluationReply, evaluate
from nodes.agent.evidence import gather_evidence
from nodes.agent.focus import focus_query, focused_evidence
from nodes.agent.rewrite import rewrite
from nodes.agent.search import search
from nodes.agent.select_entities import select_entities
from nodes.llm.client import CallTag, LlmResult, MalformedOutput

log = logging.getLogger(__name__)


def failed_calls(error: MalformedOutput) -> list[LlmResult]:
    """The calls behind a reply that never parsed, when the client attached them."""
    return list(getattr(error, "results", []))


def agent_tag(node: str, state: SubAgentState, iteration: int) -> CallTag:
    """The ledger tag of a sub-agent's call."""
    return CallTag(
        node=node,
        corpus_id=state["corpus_id"],
        run_id=run_id(),
        agent_id=f"sq{state['index']}",
        iteration=iteration,
    )


def dependencies(state: SubAgentState) -> list[tuple[str, str]]:
    """The answered (sub-question, answer) pairs this sub-question builds on."""
    return [(d["sub_question"], d["answer"]) for d in state.get("dependencies", [])]


def over_budget(state: SubAgentState, context: GraspContext) -> bool:
    """Whether the turn's tokens at dispatch plus this hop's own have reached max_tokens."""
    used = state.get("spent_before", 0) + spent(state.get("tokens"))
    return reached(context.max_tokens, used)


def observations(state: SubAgentState) -> list[str]:
    """The observation texts, oldest round first."""
    return [item["text"] for item in state.get("observations", {}).get("items", [])]


@dataclass(frozen=True)
class SubAgentNodes:
    """The sub-agent's nodes, each (state, runtime) → partial update."""

    wiring: Wiring[GraspContext]

    async def rewrite(self, state: SubAgentState, runtime: Runtime[GraspContext]) -> SubAgentState:
        """Turn the sub-question into a search statement (dense) and keywords (BM25)."""
        context, services = await self.wiring.resolve(runtime)
        if chosen(context.first_search, "first_search") == "question":
            # The sub-question, earlier answers filled in, is the first query: no call.
            statement = state["sub_question"]
            emit("searching", index=state["index"], round=1, query=statement)
            return {"iteration": 1, "search_statement": statement, "keywords": []}
        try:
            reply, results = await rewrite(
                services.llm,
                question=state["question"],
                sub_question=state["sub_question"],
                dependencies=dependencies(state),
                tag=agent_tag("rewrite", state, 1),
            )
            statement, keywords = reply.search_statement, reply.keywords
        except MalformedOutput as error:
            log.warning(
                "sq%s: rewrite reply unusable (%s); searching the sub-question",
                state["index"],
                error,
            )
            statement, keywords, results = state["sub_question"], [], failed_calls(error)
        emit("searching", index=state["index"], round=1, query=statement)
        return {
            "iteration": 1,
            "search_statement": statement,
            "keywords": keywords,
            "tokens": tally("rewrite", results, f"sq{state['index']}", 1),
        }

    async def search(self, state: SubAgentState, runtime: Runtime[GraspContext]) -> SubAgentState:
        """Hybrid search over unvisited propositions; their entities become the candidates."""
        context, services = await self.wiring.resolve(runtime)
        found = await search(
            services,
            corpus_id=state["corpus_id"],
            statement=state["search_statement"],
            keywords=state.get("keywords", []),
            params=context.retrieval_params(),
            visited_propositions=state.get("visited_propositions", []),
            visited_entities=state.get("visited_entities", []),
        )
        units = [unit for unit, _ in found.propositions]
        return {
            "candidates": found.entities,
            "hits": found.hits,
            "prior": found.prior,
            "hit_units": units,
        }

    async def select_entities(
        self, state: SubAgentState, runtime: Runtime[GraspContext]
    ) -> SubAgentState:
        """Let the LLM pick the candidates worth traversing (or take them all in the ablation)."""
        context, services = await self.wiring.resolve(runtime)
        candidates = state.get("candidates", [])
        iteration = state.get("iteration", 1)
        results: list[LlmResult] = []
        # Past the budget the selection call is not made: every candidate is traversed.
        stopped = context.entity_selection != "off" and over_budget(state, context)
        if context.entity_selection == "off" or stopped:
            chosen = [c["id"] for c in candidates]
        else:
            try:
                chosen, results = await select_entities(
                    services.llm,
                    sub_question=state["sub_question"],
                    statement=state["search_statement"],
                    observations=observations(state),
                    candidates=candidates,
                    tag=agent_tag("select_entities", state, iteration),
                )
            except MalformedOutput as error:
                log.warning(
                    "sq%s: selection reply unusable (%s); taking all", state["index"], error
                )
                chosen, results = [c["id"] for c in candidates], failed_calls(error)
        update: SubAgentState = {
            "selected": chosen,
            "visited_entities": chosen,
            "tokens": tally("select_entities", results, f"sq{state['index']}", iteration),
        }
        if stopped:
            update["budget_stopped"] = True
        return update

    async def gather_evidence(
        self, state: SubAgentState, runtime: Runtime[GraspContext]
    ) -> SubAgentState:
        """New evidence for the evaluator: RankVote passages, or what an ablation uses instead."""
        context, services = await self.wiring.resolve(runtime)
        mode = "dense" if context.retrieval == "dense" else context.evidence
        found = await gather_evidence(
            services,
            mode=mode,
            corpus_id=state["corpus_id"],
            statement=state["search_statement"],
            entities=state.get("selected", []),
            params=context.retrieval_params(),
            hits=state.get("hits", []),
            prior=state.get("prior"),
            visited_propositions=state.get("visited_propositions", []),
        )
        kind = "propositions" if context.evidence == "propositions" else "passages"
        emit(
            "reading",
            index=state["index"],
            round=state.get("iteration", 1),
            **{kind: len(found.items)},
        )
        read = RoundRead(
            round=state.get("iteration", 1),
            kind="propositions" if mode == "propositions" else "passages",
            ids=[item["id"] for item in found.items],
        )
        return {
            "evidence": found.items,
            "visited_propositions": found.covered_propositions,
            "rounds_read": [read],
        }

    async def evaluate(self, state: SubAgentState, runtime: Runtime[GraspContext]) -> SubAgentState:
        """Note what the evidence shows, then answer or ask for another search round."""
        context, services = await self.wiring.resolve(runtime)
        iteration = state.get("iteration", 1)
        if iteration == 1 and left_to_reader(state, context):
            return {"decision": "DONE", **finished(state, context, "", iteration)}
        if iteration == 1 and (bridge := await bridge_end(state, context, services)):
            return bridge
        # Past the budget this round is the last: the hop answers from what it has found.
        cut = iteration < context.max_iterations and over_budget(state, context)
        last = cut or iteration >= context.max_iterations
        query = focus_query(state["sub_question"], state["search_statement"], state["keywords"])
        try:
            reply, results = await evaluate(
                services.llm,
                question=state["question"],
                sub_question=state["sub_question"],
                dependencies=dependencies(state),
                observations=observations(state),
                evidence=focused_evidence(
                    state.get("evidence", []), query, chosen(context.focus_chars, "focus_chars")
                ),
                last_round=last,
                max_chars=context.passage_chars(len(state.get("evidence", []))),
                tag=agent_tag("evaluate", state, iteration),
                bounded=chosen(context.bounded_replies, "bounded_replies"),
                instructions=chosen(context.evaluator_prompt, "evaluator_prompt"),
            )
        except MalformedOutput as error:
            log.warning("sq%s: evaluation reply unusable (%s)", state["index"], error)
            results = failed_calls(error)
            reply = EvaluationReply(action="DONE" if last else "QUERY_AGAIN", answer=UNKNOWN)
        update: SubAgentState = {
            "observations": ObservationLog(
                cap=context.max_observations,
                items=[Observation(iteration=iteration, text=text) for text in reply.observations],
            ),
            "decision": reply.action,
            "tokens": tally("evaluate", results, f"sq{state['index']}", iteration),
        }
        if cut:
            update["budget_stopped"] = True
        if reply.action == "DONE":
            update.update(finished(state, context, reply.answer, iteration))
        else:
            update["iteration"] = iteration + 1
            update["search_statement"] = reply.search_statement.strip() or state["search_statement"]
            update["keywords"] = reply.keywords or state.get("keywords", [])
            if not last:  # past the last round the sub-agent stops instead
                query = update["search_statement"]
                emit("searching", index=state["index"], round=iteration + 1, query=query)
        return update


def after_rewrite(
    state: SubAgentState, runtime: Runtime[GraspContext]
) -> Literal["search", "gather_evidence"]:
    """Graph search, or straight to dense passage retrieval in the dense ablation."""
    context = runtime.context or GraspContext()
    return "gather_evidence" if context.retrieval == "dense" else "search"


def after_evaluate(
    state: SubAgentState, runtime: Runtime[GraspContext]
) -> Literal["search", "gather_evidence", "__end__"]:
    """Search again on QUERY_AGAIN while rounds are left; otherwise the sub-agent is done."""
    context = runtime.context or GraspContext()
    if state.get("decision") != "QUERY_AGAIN" or state.get("iteration", 1) > context.max_iterations:
        return "__end__"  # END, spelled as the literal the return type names
    return after_rewrite(state, runtime)


def build_subagent(
    wiring: Wiring[GraspContext],
) -> CompiledStateGraph[SubAgentState, GraspContext, SubAgentInput, SubAgentOutput]:
    """Compile the sub-agent: rewrite → search → select_entities → gather_evidence → evaluate ⟲."""
    nodes = SubAgentNodes(wiring)
    graph = StateGraph(
        SubAgentState,
        context_schema=GraspContext,
        input_schema=SubAgentInput,
        output_schema=SubAgentOutput,
    )
    graph.add_node("rewrite", nodes.rewrite)
    graph.add_node("search", nodes.search)
    graph.add_node("select_entities", nodes.select_entities)
    graph.add_node("gather_evidence", nodes.gather_evidence)
    graph.add_node("evaluate", nodes.evaluate)
    graph.add_edge(START, "rewrite")
    graph.add_conditional_edges("rewrite", after_rewrite, ["search", "gather_evidence"])
    graph.add_edge("search", "select_entities")
    graph.add_edge("select_entities", "gather_evidence")
    graph.add_edge("gather_evidence", "evaluate")
    graph.add_conditional_edges("evaluate", after_evaluate, ["search", "gather_evidence", END])
    return graph.compile(name="grasp_sub_agent")
