"""The GRASP agent graph: plan → sub-agents (concurrent where the plan allows) → synthesis."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer, Overwrite, Send

from graphs.agent.answer_checks import checked_answer
from graphs.agent.answer_deltas import AnswerDeltas
from graphs.agent.budget import reached, spent
from graphs.agent.chat_messages import answer_message, conversation_history, turn_question
from graphs.agent.cite import turn_citations
from graphs.agent.context import GraspContext, chosen
from graphs.agent.hop_skips import skipped_hops
from graphs.agent.plan_review import add_plan_review
from graphs.agent.progress import emit, stream_writer
from graphs.agent.reader_passages import hop_passage_texts, question_passage
from graphs.agent.state import (
    Dependency,
    GraspInput,
    GraspState,
    SubAgentInput,
    SubQuestion,
    Turn,
    add_usage,
    tally,
    usage_of,
)
from graphs.agent.subagent import build_subagent, failed_calls
from graphs.agent.token_events import report_tokens, take_up
from graphs.models.providers import is_local
from graphs.runtime.services import Services
from graphs.runtime.wiring import ServicesProvider, Wiring, as_provider, run_id
from nodes.agent.evaluate import UNKNOWN
from nodes.agent.focus import focused_passages, reader_query
from nodes.agent.plan import PlanRejected, make_plan
from nodes.agent.plan_both import both_plan
from nodes.agent.plan_dag import final_hops, ready, substitute
from nodes.agent.synthesize import read_final_answer, synthesize
from nodes.llm.client import CallTag, LlmResult, MalformedOutput
from store.corpora import corpus_id

log = logging.getLogger(__name__)

GraspGraph = CompiledStateGraph[GraspState, GraspContext, GraspInput, GraspState]


def sub_agent_input(
    state: GraspState, sub_questions: Mapping[int, SubQuestion], index: int
) -> SubAgentInput:
    """What sub-agent `index` is sent: its sub-question, earlier answers filled in, and those."""
    answers = state.get("answers", {})
    sub_question = sub_questions[index]
    return SubAgentInput(
        question=state["question"],
        corpus_id=state["corpus_id"],
        index=index,
        sub_question=substitute(sub_question["text"], answers),
        final=index in final_hops(list(sub_questions.values())),
        dependencies=[
            Dependency(
                sub_question=substitute(sub_questions[k]["text"], answers), answer=answers[k]
            )
            for k in sub_question["depends_on"]
        ],
    )


async def final_answer(
    services: Services,
    state: GraspState,
    context: GraspContext,
    chain: list[tuple[str, str]],
    deltas: AnswerDeltas,
    question_best: int | None = None,
) -> tuple[str, str, list[LlmResult]]:
    """The final answer, its justification and its calls: the reader or the findings synthesis.

    A reply that cannot be used gives the last sub-answer; `checked_answer` mends a bridge slip
    and an unsupported "yes".
    The reader also reads `question_best`, the whole question's best passage (`question_passage`).
    """
    tag = CallTag(node="synthesize", corpus_id=state.get("corpus_id"), run_id=run_id())
    try:
        with deltas.listening():
            if context.synthesis == "reader":
                passages = focused_passages(
                    await hop_passage_texts(
                        services, state, context.reader_passages, question_best
                    ),
                    reader_query(state["question"], chain),
                    chosen(context.reader_focus_chars, "reader_focus_chars"),
                )
                reply, results = await read_final_answer(
                    services.llm,
                    question=state["question"],
                    passages=passages,
                    tag=tag,
                    max_chars=context.passage_chars(len(passages)),
                )
            else:
                reply, results = await synthesize(
                    services.llm,
                    question=state["question"],
                    plan=state.get("plan", ""),
                    chain=chain,
                    tag=tag,
                )
    except MalformedOutput as exc:
        log.warning("synthesis reply unusable (%s); giving the last sub-answer", exc)
        answer = chain[-1][1] if chain else UNKNOWN
        return answer, f"synthesis failed ({exc}); this is the last sub-answer", failed_calls(exc)
    answer, why = await checked_answer(services, state, context, reply.answer, reply.justification)
    return answer, why, results


def out_of_budget(state: GraspState, runtime: Runtime[GraspContext] | None) -> bool:
    """Whether the turn's tally has reached max_tokens: hops not started yet are skipped."""
    context = (runtime.context if runtime else None) or GraspContext()
    return reached(context.max_tokens, spent(state.get("tokens")))


def dispatch(
    state: GraspState, runtime: Runtime[GraspContext] | None = None
) -> list[Send] | Literal["synthesize"]:
    """Send every sub-question whose dependencies are answered; synthesise when none is left.

    The ready ones go out together, so they run in the same superstep (concurrently); the next
    layer of the DAG is dispatched once they are all back at `schedule`. Past the token budget
    none is sent: the synthesis answers from the hops done.
    """
    sub_questions = state.get("sub_questions", [])
    todo = ready(sub_questions, state.get("answers", {}))
    if not todo or out_of_budget(state, runtime):
        return "synthesize"
    by_index = {sq["index"]: sq for sq in sub_questions}
    inputs = [sub_agent_input(state, by_index, k) for k in todo]
    if runtime and runtime.context and runtime.context.max_tokens:
        for item in inputs:  # a budgeted hop checks the turn's tally so far plus its own
            item["spent_before"] = spent(state.get("tokens"))
    return [Send("sub_agent", item) for item in inputs]


@dataclass(frozen=True)
class ParentNodes:
    """The parent graph's nodes, each (state, runtime) → partial update."""

    wiring: Wiring[GraspContext]

    async def plan(self, state: GraspState, runtime: Runtime[GraspContext]) -> dict[str, Any]:
        """Split the question into sub-questions (or keep it whole), starting a new turn."""
        context, services = await self.wiring.resolve(runtime)
        question, asked = turn_question(state)
        if not question:
            raise ValueError("the question is empty")
        turns = state.get("turns", [])
        emit("planning", turn=len(turns) + 1, question=question)
        # Only earlier questions and final answers: their evidence stays private to them.
        earlier = conversation_history(state, turns)
        history = earlier[-context.history_turns :] if context.history_turns else []
        # A missing corpus fails here, before any tokens are spent.
        corpus = await asyncio.to_thread(corpus_id, services.engine, context.corpus)
        whole = [SubQuestion(index=1, text=question, depends_on=[])]
        plan, sub_questions, error, results = "", whole, None, list[LlmResult]()
        fixed = both_plan(question) if context.planner == "on" else None
        if fixed is not None:
            plan, sub_questions = fixed.text, fixed.sub_questions
        elif context.planner == "on":
            tag = CallTag(node="plan", corpus_id=corpus, run_id=run_id())
            try:
                made = await make_plan(
                    services.llm,
                    question=question,
                    tag=tag,
                    history=history,
                    history_chars=context.history_chars,
                    unwritten_needs=chosen(context.unwritten_needs, "unwritten_needs"),
                )
                plan, sub_questions, results = made.text, made.sub_questions, made.calls
            except (PlanRejected, MalformedOutput) as exc:
                error = f"plan rejected ({exc}); the question is answered as a single hop"
                log.warning(error)
                results = exc.results if isinstance(exc, PlanRejected) else failed_calls(exc)
        emit("plan", plan=plan, sub_questions=sub_questions)
        # A new turn starts its own fields from scratch: reducers would otherwise merge them.
        return {
            "turn": len(turns) + 1,
            "question": question,
            "corpus_id": corpus,
            "plan": plan,
            "sub_questions": sub_questions,
            "plan_review": [],
            "answers": Overwrite({}),
            "hop_passages": Overwrite({}),
            "hop_reads": Overwrite({}),
            "tokens": Overwrite(report_tokens(tally("plan", results), new_turn=True)),
            "budget_stopped": Overwrite(False),
            "final_answer": "",
            "justification": "",
            "citations": [],
            "error": error,
            "messages": asked,
        }

    async def schedule(self, state: GraspState, runtime: Runtime[GraspContext]) -> dict[str, Any]:
        """The join point between DAG layers: skips hops built on nothing, flags unmet plans."""
        sub_questions = state.get("sub_questions", [])
        skipped = {k: UNKNOWN for k in skipped_hops(sub_questions, state.get("answers", {}))}
        answers = {**state.get("answers", {}), **skipped}
        if len(answers) < len(sub_questions) and not ready(sub_questions, answers):
            # Unreachable for a validated plan; say so rather than loop or stop silently.
            missing = [sq["index"] for sq in sub_questions if sq["index"] not in answers]
            return {"error": f"sub-questions {missing} can never run: their dependencies are unmet"}
        take_up(state.get("tokens"))  # the running total of `tokens` events, exact again
        if ready(sub_questions, answers) and out_of_budget(state, runtime):
            return {"budget_stopped": True}  # dispatch sends no hop: synthesis answers now
        by_index = {sq["index"]: sq for sq in sub_questions}
        for k in ready(sub_questions, answers):
            asked = sub_agent_input(state, by_index, k)["sub_question"]
            emit("hop_started", index=k, of=len(sub_questions), question=asked)
        return {"answers": skipped} if skipped else {}

    async def synthesize(self, state: GraspState, runtime: Runtime[GraspContext]) -> dict[str, Any]:
        """Write the final short answer from the chain of sub-answers; it ends the turn.

        The raw reply streams (stream_mode="messages", metadata langgraph_node == "synthesize"),
        and the answer's words alone as "answer_delta" custom events.
        """
        context, services = await self.wiring.resolve(runtime)
        answers = state.get("answers", {})
        sub_questions = state.get("sub_questions", [])
        chain = [
            (substitute(sq["text"], answers), answers.get(sq["index"], UNKNOWN))
            for sq in sub_questions
        ]
        emit("synthesizing", hops=len(chain))
        deltas = AnswerDeltas(stream_writer())
        best = await question_passage(services, state, context)
        answer, why, results = await final_answer(services, state, context, chain, deltas, best)
        tokens = report_tokens(tally("synthesize", results), before=state.get("tokens"))
        deltas.finish(answer)
        citations = await turn_citations(services, state, answer, best)
        emit("answer", answer=answer, justification=why, citations=citations)
        this_turn = add_usage(usage_of(state.get("tokens")), usage_of(tokens))
        earlier = [t["tokens"] for t in state.get("turns", [])]
        return {
            "final_answer": answer,
            "justification": why,
            "citations": citations,
            "messages": [answer_message(answer, citations)],
            "tokens": tokens,
            "turns": [Turn(question=state["question"], answer=answer, tokens=this_turn)],
            "conversation_tokens": add_usage(*earlier, this_turn),
        }


def settle_for_model(context: GraspContext, services: Services) -> GraspContext:
    """The run's context with its profile resolved for the model it runs on."""
    return context.resolved(local_model=is_local(services.llm.model_name))


def build_grasp_graph(
    services: Services | ServicesProvider | None = None, checkpointer: Checkpointer = None
) -> GraspGraph:
    """Compile the GRASP graph.

    `services`: fixed Services (tests, embedding apps), a provider called with each run's
    GraspContext, or None to build them from the environment at run time (the dev server).
    `checkpointer`: None for langgraph.json (the server brings its own), else e.g. a Postgres saver.
    """
    wiring = Wiring(as_provider(services), GraspContext, settle=settle_for_model)
    nodes = ParentNodes(wiring)
    graph = StateGraph(GraspState, context_schema=GraspContext, input_schema=GraspInput)
    graph.add_node("plan", nodes.plan)
    graph.add_node("schedule", nodes.schedule)
    graph.add_node("sub_agent", build_subagent(wiring))
    graph.add_node("synthesize", nodes.synthesize)
    graph.add_edge(START, "plan")
    add_plan_review(graph, wiring)  # plan → schedule, or plan → review_plan → schedule
    graph.add_conditional_edges("schedule", dispatch, ["sub_agent", "synthesize"])
    graph.add_edge("sub_agent", "schedule")
    graph.add_edge("synthesize", END)
    return graph.compile(checkpointer=checkpointer, name="grasp")


#: What langgraph.json exports: no checkpointer (the server has one), services from the environment
#: (resolved lazily at the first run, so importing this module touches nothing).
graph = build_grasp_graph()
