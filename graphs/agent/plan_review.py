"""Plan review (`review_plan`): the run pauses after the planner until a person decides.

The pause is an `interrupt()` whose value is one Agent Inbox `HumanInterrupt` in a list (the shape
Agent Inbox and Agent Chat UI render). The reply (a `HumanResponse`, alone or in a list) is:
- {"type": "accept"}: the plan runs;
- {"type": "edit", "args": {"plan": …, "sub_questions": ["…", "… #1 …"]}}: the edit is checked
  as a DAG and runs; a broken one is refused, and the run pauses again with the reason on top;
- {"type": "response", "args": "…"}: the planner plans again with the words as guidance, and the
  new plan is reviewed in turn.
Each decision is appended to the state's `plan_review`. The node calls `interrupt()` once, before
anything else, so re-running it on resume repeats nothing; a decision that needs another review
goes back to this node as a new step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from langgraph.graph import StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from graphs.agent.context import GraspContext, chosen
from graphs.agent.progress import emit
from graphs.agent.state import GraspInput, GraspState, PlanReview, SubQuestion, tally
from graphs.agent.subagent import failed_calls
from graphs.agent.token_events import report_tokens
from graphs.runtime.wiring import Wiring, run_id
from nodes.agent.plan import PlanRejected, make_plan
from nodes.agent.plan_dag import PlanError
from nodes.agent.plan_edit import ReviewAction, edited_plan, review_args
from nodes.llm.client import CallTag, LlmResult, MalformedOutput

#: The interrupt's action name, and what a reviewer may do (Agent Inbox's HumanInterruptConfig).
ACTION = "review_plan"
ALLOWED = {"allow_accept": True, "allow_edit": True, "allow_respond": True, "allow_ignore": False}
HOW = (
    "#k stands for the answer of sub-question k. Accept to run this plan, edit it (change, add or "
    "remove sub-questions and their #k links), or respond with guidance to plan again."
)

After = Literal["schedule", "review_plan"]


def plan_text(plan: str, sub_questions: list[SubQuestion]) -> list[str]:
    """The plan as lines: its sentence, then each sub-question with the steps it needs."""
    lines = [f"Plan: {plan or '(none: the question is answered as one hop)'}"]
    for sq in sub_questions:
        needs = (
            f" (needs {', '.join(f'#{k}' for k in sq['depends_on'])})" if sq["depends_on"] else ""
        )
        lines.append(f"{sq['index']}. {sq['text']}{needs}")
    return lines


def review_request(state: GraspState) -> list[dict[str, Any]]:
    """The interrupt's value: one HumanInterrupt holding the plan, the last refusal on top."""
    sub_questions = state.get("sub_questions", [])
    reviews = state.get("plan_review", [])
    last = reviews[-1] if reviews else None
    notes = []
    if last is not None and last["action"] == "refused":
        notes.append(f"Not used: {last['note']}")
    elif last is not None and last["action"] == "response":
        notes.append(f"Planned again with your guidance: {last['note']}")
    if state.get("error"):
        notes.append(f"Note: {state['error']}")
    plan = plan_text(state.get("plan", ""), sub_questions)
    heading = f"Review the plan for: {state.get('question', '')}"
    description = "\n".join([heading, *notes, "", *plan, "", HOW])
    return [
        {
            "action_request": {
                "action": ACTION,
                "args": review_args(state.get("plan", ""), sub_questions),
            },
            "config": dict(ALLOWED),
            "description": description,
        }
    ]


def read_reply(reply: Any) -> tuple[str, Any]:
    """(type, args) of a HumanResponse, given alone or as the one item of a list."""
    if isinstance(reply, list) and len(reply) == 1:
        reply = reply[0]
    if not isinstance(reply, dict):
        return "", reply
    return str(reply.get("type", "")), reply.get("args")


def record(state: GraspState, action: ReviewAction, note: str, **after: Any) -> list[PlanReview]:
    """The state's review log with one more decision (`after`: the plan it leaves, if changed)."""
    before = [sq["text"] for sq in state.get("sub_questions", [])]
    steps: list[SubQuestion] = after.get("sub_questions", state.get("sub_questions", []))
    decision = PlanReview(
        action=action,
        note=note,
        before=before,
        after=[sq["text"] for sq in steps],
        plan=after.get("plan", state.get("plan", "")),
    )
    return [*state.get("plan_review", []), decision]


def guidance(state: GraspState, words: str) -> str:
    """What the planner is told when a reviewer answers: the plan it made, and their words."""
    earlier = "\n".join(plan_text(state.get("plan", ""), state.get("sub_questions", [])))
    return f"The earlier plan:\n{earlier}\nThe reviewer's words: {words.strip()}"


@dataclass(frozen=True)
class PlanReviewNode:
    """The review step: pause with the plan, then act on the reply."""

    wiring: Wiring[GraspContext]

    async def review(self, state: GraspState, runtime: Runtime[GraspContext]) -> Command[After]:
        """Pause for a decision on the plan; run it, run an edit, or plan again."""
        kind, args = read_reply(interrupt(review_request(state)))
        if kind == "accept":
            emit("plan_review", action="accept")
            return Command(goto="schedule", update={"plan_review": record(state, "accept", "")})
        if kind == "edit":
            try:
                plan, steps = edited_plan(args, state.get("plan", ""))
            except PlanError as exc:
                return refuse(state, f"the edit is refused: {exc}")
            emit("plan_review", action="edit")
            emit("plan", plan=plan, sub_questions=steps)
            update = {"plan": plan, "sub_questions": steps, "error": None}
            log = record(state, "edit", "", plan=plan, sub_questions=steps)
            return Command(goto="schedule", update={**update, "plan_review": log})
        if kind == "response" and isinstance(args, str) and args.strip():
            return await self.plan_again(state, runtime, args)
        shown = kind or repr(args)[:60]
        return refuse(state, f"reply accept, edit or response (with text), not {shown!r}")

    async def plan_again(
        self, state: GraspState, runtime: Runtime[GraspContext], words: str
    ) -> Command[After]:
        """Plan again with the reviewer's words; the new plan is reviewed in turn."""
        context, services = await self.wiring.resolve(runtime)
        recent = state.get("turns", [])[-context.history_turns :] if context.history_turns else []
        tag = CallTag(node="plan", corpus_id=state.get("corpus_id"), run_id=run_id())
        calls: list[LlmResult] = []
        try:
            made = await make_plan(
                services.llm,
                question=state["question"],
                tag=tag,
                history=[(t["question"], t["answer"]) for t in recent],
                history_chars=context.history_chars,
                unwritten_needs=chosen(context.unwritten_needs, "unwritten_needs"),
                guidance=guidance(state, words),
            )
        except (PlanRejected, MalformedOutput) as exc:
            calls = exc.results if isinstance(exc, PlanRejected) else failed_calls(exc)
            tokens = report_tokens(tally("plan", calls), before=state.get("tokens"))
            why = f"planning again failed ({exc}); the plan is unchanged"
            return refuse(state, why, tokens=tokens)
        tokens = report_tokens(tally("plan", made.calls), before=state.get("tokens"))
        plan, steps = made.text, made.sub_questions
        emit("plan_review", action="response")
        emit("plan", plan=plan, sub_questions=steps)
        log = record(state, "response", words.strip(), plan=plan, sub_questions=steps)
        update: dict[str, Any] = {"plan": plan, "sub_questions": steps, "error": None}
        update |= {"tokens": tokens, "plan_review": log}
        return Command(goto="review_plan", update=update)


def refuse(state: GraspState, why: str, **update: Any) -> Command[After]:
    """Pause again on the same plan, with the reason on top of the next review."""
    emit("plan_review", action="refused", note=why)
    log = record(state, "refused", why)
    return Command(goto="review_plan", update={**update, "plan_review": log})


def after_plan(state: GraspState, runtime: Runtime[GraspContext]) -> After:
    """To the review when the run asks for one, else straight to the hops."""
    context = runtime.context or GraspContext()
    return "review_plan" if context.review_plan else "schedule"


def add_plan_review(
    graph: StateGraph[GraspState, GraspContext, GraspInput, GraspState],
    wiring: Wiring[GraspContext],
) -> None:
    """Put the review between `plan` and `schedule` (it is skipped unless `review_plan` is on)."""
    node = PlanReviewNode(wiring)
    graph.add_node("review_plan", node.review, destinations=("schedule", "review_plan"))
    graph.add_conditional_edges("plan", after_plan, ["review_plan", "schedule"])
