"""Decompose a multi-hop question into single-fact sub-questions (PRISM's analyzer, Self-Ask)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user

#: More sub-questions than MuSiQue's longest chains need are cut off.
MAX_SUB_QUESTIONS = 5

SYSTEM = """\
You break a question into the simple sub-questions that have to be answered, in order, to \
answer it. Each sub-question asks for one fact about the people, places or things the question \
names. Where a sub-question needs the answer of an earlier one, write #k for that answer, k being \
the earlier sub-question's number (from 1). A question that needs only one fact gets one \
sub-question: itself.

Example. For the question "What is the capital of the country where Ada Brook was born?" the \
reply is {"sub_questions": ["In which country was Ada Brook born?", "What is the capital of #1?"]}

Reply with the JSON object only.
"""


class DecompositionReply(BaseModel):
    """The sub-questions, in the order they are to be answered."""

    model_config = ConfigDict(extra="ignore")

    sub_questions: list[str]

    @field_validator("sub_questions")
    @classmethod
    def _clean(cls, value: list[str]) -> list[str]:
        kept = [text.strip() for text in value if text.strip()]
        if not kept:
            raise ValueError("no sub-questions")
        return kept[:MAX_SUB_QUESTIONS]


async def decompose(
    llm: LlmClient, *, question: str, tag: CallTag
) -> tuple[list[str], list[LlmResult]]:
    """The question's sub-questions (raises MalformedOutput with its calls when none parse)."""
    reply, results = await llm.complete_json(
        system_and_user(SYSTEM, f"Question: {question}"), DecompositionReply, tag
    )
    return reply.sub_questions, results
