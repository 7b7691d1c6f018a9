"""The planner: one LLM call turns a multi-hop question into a plan and single-hop sub-questions.

Every sub-question is an object {"needs": [k, …], "question": "… #k …"}: the reply's JSON schema
(a grammar for llama.cpp) lets step k list only earlier steps, and plan_links repairs a text that
disagrees with its needs. (Two other reply formats were measured and removed: docs/experiments.md.)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from nodes.agent.plan_dag import PlanError, SubQuestion
from nodes.agent.plan_links import DraftStep, Repair, UnwrittenNeeds, link_plan
from nodes.agent.plan_prompts import LINKED_SYSTEM
from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user

log = logging.getLogger(__name__)

#: Longest plan the linked schema allows (MuSiQue's longest questions take four hops).
MAX_STEPS = 5

USER = "Question: {question}"

#: After the question when a reviewer asked for another plan (`make_plan`'s `guidance`).
GUIDANCE = """

A reviewer read an earlier plan for this question and asks for another one. Follow their words:
{guidance}"""

#: Shown before the question on a later turn of a conversation, so references can be resolved.
HISTORY = """\
Earlier in this conversation (use it only to tell who or what the question's words such as \
"she", "it" or "that film" refer to, and write the name itself in the sub-questions):
{turns}

"""


def history_block(turns: Sequence[tuple[str, str]], max_chars: int) -> str:
    """The earlier turns' questions and answers, each cut to `max_chars`; "" when there are none."""
    if not turns:
        return ""

    def cut(text: str) -> str:
        text = " ".join(text.split())
        return text if len(text) <= max_chars else text[: max(max_chars - 1, 0)] + "…"

    lines = [f"Q: {cut(question)}\nA: {cut(answer)}" for question, answer in turns]
    return HISTORY.format(turns="\n".join(lines))


class LinkedStep(BaseModel):
    """One sub-question of the linked format: the earlier steps it needs, and its text."""

    model_config = ConfigDict(extra="ignore")

    needs: list[int] = Field(default_factory=list, description="earlier steps this one uses")
    question: str = Field(validation_alias=AliasChoices("question", "text", "sub_question"))

    @field_validator("needs", mode="before")
    @classmethod
    def _step_numbers(cls, value: Any) -> list[int]:
        # API models without a grammar write "#2", "2" or a bare 2; anything else is no step.
        items = value if isinstance(value, list) else [value]
        numbers = []
        for item in items:
            text = str(item).strip().lstrip("#")
            if text.isdigit():
                numbers.append(int(text))
        return numbers


class LinkedPlanReply(BaseModel):
    """The planner's reply; a bare string step is read as its #k links."""

    model_config = ConfigDict(extra="ignore")

    plan: str = Field(default="", description="one sentence on how to reach the answer")
    sub_questions: list[LinkedStep | str] = Field(description="steps with their needs")

    def drafts(self) -> list[DraftStep]:
        """The steps for plan_links, strings taken as steps that list no needs."""
        return [
            DraftStep(step, ())
            if isinstance(step, str)
            else DraftStep(step.question, tuple(step.needs))
            for step in self.sub_questions
        ]


def _linked_step_schema(position: int) -> dict[str, Any]:
    """Step `position` (from 1) may list only the steps before it, so no self or forward link."""
    needs: dict[str, Any] = (
        {"const": []}
        if position == 1
        else {
            "type": "array",
            "items": {"enum": list(range(1, position))},
            "maxItems": position - 1,
        }
    )
    return {
        "type": "object",
        # needs first: the model commits to its links before it writes the text that uses them.
        "properties": {"needs": needs, "question": {"type": "string"}},
        "required": ["needs", "question"],
    }


def linked_schema(max_steps: int = MAX_STEPS) -> dict[str, Any]:
    """JSON schema of a linked reply with 1 to `max_steps` steps (llama.cpp makes it a grammar).

    Each length is its own alternative because a step's allowed needs depend on its position,
    which a plain `items` schema cannot say.
    """
    plans = [
        {
            "type": "array",
            "prefixItems": [_linked_step_schema(p) for p in range(1, length + 1)],
            "minItems": length,
            "maxItems": length,
        }
        for length in range(1, max_steps + 1)
    ]
    return {
        "type": "object",
        "properties": {"plan": {"type": "string"}, "sub_questions": {"anyOf": plans}},
        "required": ["plan", "sub_questions"],
    }


REASK = """\
That plan cannot be run: {problem}. Write it again so that every #k names an earlier \
sub-question and no sub-question needs its own answer. Reply with the JSON object only."""


class PlanRejected(PlanError):
    """The planner kept producing a plan that cannot be run; carries the calls it cost."""

    def __init__(self, message: str, results: list[LlmResult]) -> None:
        super().__init__(message)
        self.results = results


@dataclass(frozen=True)
class Plan:
    """A validated plan: its text, the steps, every LLM call it took and the repairs made."""

    text: str
    sub_questions: list[SubQuestion]
    calls: list[LlmResult]
    repairs: list[Repair] = field(default_factory=list)


async def make_plan(
    llm: LlmClient,
    *,
    question: str,
    tag: CallTag,
    attempts: int = 2,
    history: Sequence[tuple[str, str]] = (),
    history_chars: int = 400,
    unwritten_needs: UnwrittenNeeds = "append",
    guidance: str = "",
) -> Plan:
    """Plan `question`: the validated steps and every call made.

    A plan that cannot be repaired (a placeholder naming a missing step, a cycle, no steps) is
    asked for again with the problem stated; after `attempts` such plans, PlanRejected says what
    is wrong. A reply that is not valid JSON is the client's to re-ask (MalformedOutput when it
    stays broken). `history`: the conversation's earlier (question, answer) turns the planner
    may use to resolve references, each cut to `history_chars`; none leaves the prompt as it was.
    `unwritten_needs`: a step's listed need that its text has no place for is appended
    as "(#k)" or dropped (see `link_plan`). `guidance`: a reviewer's words on an earlier plan,
    put after the question; none leaves the prompt as it was.
    """
    user = history_block(history, history_chars) + USER.format(question=question)
    if guidance.strip():
        user += GUIDANCE.format(guidance=guidance.strip())
    first = system_and_user(LINKED_SYSTEM, user)
    messages: list[BaseMessage] = list(first)
    calls: list[LlmResult] = []
    problem = PlanError("no attempt was made")
    for _ in range(attempts):
        reply, results = await llm.complete_json(
            messages, LinkedPlanReply, tag, json_schema=linked_schema()
        )
        calls.extend(results)
        try:
            steps, repairs = link_plan(question, reply.drafts(), unwritten_needs)
        except PlanError as error:
            problem = error
            messages = [
                *first,
                AIMessage(content=reply.model_dump_json()),
                HumanMessage(content=REASK.format(problem=error)),
            ]
            continue
        for repair in repairs:
            log.info("plan repaired: %s", repair)
        return Plan(reply.plan.strip(), steps, calls, repairs)
    raise PlanRejected(str(problem), calls)
