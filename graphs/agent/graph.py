"""The GRASP agent graph: plan → sub-agents (concurrent where the plan allows) → synthesis."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer, Overwrite, Send

from graphs.agent.context import GraspContext
from graphs.agent.state import (
    Dependency,
    GraspInput,
    GraspState,
    SubAgentInput,
    SubQuestion,
    tally,
)
from graphs.agent.subagent import build_subagent, failed_calls
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider, run_id
from nodes.agent.evaluate import UNKNOWN
from nodes.agent.plan import PlanRejected, make_plan
from nodes.agent.plan_dag import PlanStep, ready, substitute
from nodes.agent.synthesize import synthesize
from nodes.llm.client import CallTag, LlmResult, MalformedOutput
from store.corpora import corpus_id

log = logging.getLogger(__name__)

GraspGraph = CompiledStateGraph[GraspState, GraspContext, GraspInput, GraspState]


def steps_of(state: GraspState) -> list[PlanStep]:
    """The plan's sub-questions as DAG steps."""
    return [
        PlanStep(sq["index"], sq["text"], tuple(sq["depends_on"]))
        for sq in state.get("sub_questions", [])
    ]


def sub_agent_input(state: GraspState, step: PlanStep, answers: dict[int, str]) -> SubAgentInput:
    """What a sub-agent is sent: its sub-question with earlier answers filled in, and those answers."""
    by_index = {s.index: s for s in steps_of(state)}
    return SubAgentInput(
        question=state["question"],
        corpus_id=state["corpus_id"],
        index=step.index,
        sub_question=substitute(step.text, answers),
        dependencies=[
            Dependency(sub_question=substitute(by_index[k].text, answers), answer=answers[k])
            for k in step.depends_on
        ],
    )


def dispatch(state: GraspState) -> list[Send] | Literal["synthesize"]:
    """Send every sub-question whose dependencies are answered; synthesise when none is left.

    The ready ones go out together, so they run in the same superstep (concurrently); the next
    layer of the DAG is dispatched once they are all back at `schedule`.
    """
    answers = state.get("answers", {})
    todo = ready(steps_of(state), answers)
    if not todo:
        return "synthesize"
    steps = {step.index: step for step in steps_of(state)}
    return [Send("sub_agent", sub_agent_input(state, steps[k], answers)) for k in todo]


@dataclass(frozen=True)
class ParentNodes:
    """The parent graph's nodes, each (state, runtime) → partial update."""

    wiring: Wiring[GraspContext]

    async def plan(self, state: GraspState, runtime: Runtime[GraspContext]) -> dict[str, Any]:
        context, services = await self.wiring.resolve(runtime)
        question = state["question"].strip()
        if not question:
            raise ValueError("the question is empty")
        # A missing corpus fails here, before any tokens are spent.
        corpus = await asyncio.to_thread(corpus_id, services.engine, context.corpus)
        whole = [PlanStep(1, question, ())]
        plan, steps, error, results = "", whole, None, list[LlmResult]()
        if context.planner == "on":
            tag = CallTag(node="plan", corpus_id=corpus, run_id=run_id())
            try:
                plan, steps, results = await make_plan(services.llm, question, tag)
            except (PlanRejected, MalformedOutput) as exc:
                error = f"plan rejected ({exc}); the question is answered as a single hop"
                log.warning(error)
                results = exc.results if isinstance(exc, PlanRejected) else failed_calls(exc)
        # A new question on a used thread starts from scratch: reducers would otherwise merge.
        return {
            "question": question,
            "corpus_id": corpus,
            "plan": plan,
            "sub_questions": [
                SubQuestion(index=s.index, text=s.text, depends_on=list(s.depends_on))
                for s in steps
            ],
            "answers": Overwrite({}),
            "tokens": Overwrite(tally("plan", results)),
            "final_answer": "",
            "justification": "",
            "error": error,
        }

    async def schedule(self, state: GraspState) -> dict[str, Any]:
        steps = steps_of(state)
        answers = state.get("answers", {})
        if len(answers) < len(steps) and not ready(steps, answers):
            # Unreachable for a validated plan; say so rather than loop or stop silently.
            missing = [s.index for s in steps if s.index not in answers]
            return {"error": f"sub-questions {missing} can never run: their dependencies are unmet"}
        return {}

    async def synthesize(self, state: GraspState, runtime: Runtime[GraspContext]) -> dict[str, Any]:
        _, services = await self.wiring.resolve(runtime)
        answers = state.get("answers", {})
        chain = [
            (substitute(sq["text"], answers), answers.get(sq["index"], UNKNOWN))
            for sq in state.get("sub_questions", [])
        ]
        tag = CallTag(node="synthesize", corpus_id=state.get("corpus_id"), run_id=run_id())
        try:
            reply, results = await synthesize(
                services.llm, state["question"], state.get("plan", ""), chain, tag
            )
            answer, why = reply.answer, reply.justification
        except MalformedOutput as exc:
            log.warning("synthesis reply unusable (%s); giving the last sub-answer", exc)
            answer = chain[-1][1] if chain else UNKNOWN
            why, results = (
                f"synthesis failed ({exc}); this is the last sub-answer",
                failed_calls(exc),
            )
        return {
            "final_answer": answer,
            "justification": why,
            "tokens": tally("synthesize", results),
        }


def build_grasp_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> GraspGraph:
    """Compile the GRASP graph.

    `services`: fixed Services (tests, embedding apps), a provider called with each run's
    GraspContext, or None to build them from the environment at run time (the dev server).
    `checkpointer`: None for langgraph.json (the server brings its own), else e.g. a Postgres saver.
    """
    wiring = Wiring(as_provider(services), GraspContext)
    nodes = ParentNodes(wiring)
    graph = StateGraph(GraspState, context_schema=GraspContext, input_schema=GraspInput)
    graph.add_node("plan", nodes.plan)
    graph.add_node("schedule", nodes.schedule)
    graph.add_node("sub_agent", build_subagent(wiring))
    graph.add_node("synthesize", nodes.synthesize)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "schedule")
    graph.add_conditional_edges("schedule", dispatch, ["sub_agent", "synthesize"])
    graph.add_edge("sub_agent", "schedule")
    graph.add_edge("synthesize", END)
    return graph.compile(checkpointer=checkpointer, name="grasp")


#: What langgraph.json exports: no checkpointer (the server has one), services from the environment
#: (resolved lazily at the first run, so importing this module touches nothing).
graph = build_grasp_graph()
