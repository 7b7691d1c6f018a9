"""The planner: one LLM call turns a multi-hop question into a plan and single-hop sub-questions."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field

from nodes.agent.plan_dag import PlanError, SubQuestion, build_dag
from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user

SYSTEM = """\
You split a question that needs several facts into single-hop sub-questions. A search agent will \
answer each sub-question from a text collection, one fact at a time.

Write a JSON object with two fields:
- "plan": one to three sentences saying how the answer can be reached.
- "sub_questions": the sub-questions, in order. Each one asks for exactly one fact. Where a \
sub-question needs the answer of an earlier one, write #k in place of that answer, k being the \
earlier sub-question's number (counting from 1). Sub-questions that do not need each other's \
answers must not mention each other: they are searched at the same time. Do not add a last \
sub-question that only compares or combines earlier answers; that is done after the search.

Reply with the JSON object only.

Examples.

Question: In which country was the founder of the company that makes the Lumo kettle born?
{"plan": "Find the maker of the Lumo kettle, then who founded that company, then where that \
person was born.", "sub_questions": ["Which company makes the Lumo kettle?", "Who founded #1?", \
"In which country was #2 born?"]}

Question: Which film did the director of Red Quarry make together with the composer of Low Tide \
Suite?
{"plan": "The director and the composer can be looked up independently; then find the film \
they made together.", "sub_questions": ["Who directed Red Quarry?", "Who composed Low Tide \
Suite?", "Which film did #1 make with #2?"]}

Question: Which river is longer, the Orvel or the Tesk?
{"plan": "Look up the length of each river separately and compare them.", "sub_questions": \
["How long is the river Orvel?", "How long is the river Tesk?"]}
"""

USER = "Question: {question}"


class PlanReply(BaseModel):
    """The planner's reply."""

    model_config = ConfigDict(extra="ignore")

    plan: str = Field(description="one to three sentences on how to reach the answer")
    sub_questions: list[str] = Field(description="single-hop sub-questions, #k = answer of step k")


REASK = """\
That plan cannot be run: {problem}. Write it again so that every #k names an earlier \
sub-question and no sub-question needs its own answer. Reply with the JSON object only."""


class PlanRejected(PlanError):
    """The planner kept producing a plan that cannot be run; carries the calls it cost."""

    def __init__(self, message: str, results: list[LlmResult]) -> None:
        super().__init__(message)
        self.results = results


async def make_plan(
    llm: LlmClient, *, question: str, tag: CallTag, attempts: int = 2
) -> tuple[str, list[SubQuestion], list[LlmResult]]:
    """Plan `question`: (plan text, validated sub-questions, every call made).

    A plan whose placeholders reference a missing step or form a cycle is asked for again with
    the problem stated; after `attempts` broken plans, PlanRejected says what is wrong. A reply
    that is not valid JSON is the client's to re-ask (MalformedOutput when it stays broken).
    """
    first = system_and_user(SYSTEM, USER.format(question=question))
    messages: list[BaseMessage] = list(first)
    calls: list[LlmResult] = []
    problem = PlanError("no attempt was made")
    for _ in range(attempts):
        reply, results = await llm.complete_json(messages, PlanReply, tag)
        calls.extend(results)
        try:
            return reply.plan.strip(), build_dag(reply.sub_questions), calls
        except PlanError as error:
            problem = error
            messages = [
                *first,
                AIMessage(content=reply.model_dump_json()),
                HumanMessage(content=REASK.format(problem=error)),
            ]
    raise PlanRejected(str(problem), calls)
