"""Rewrite: a sub-question becomes a declarative search statement (dense) and keywords (BM25)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from nodes.prompt_blocks import known_answers

SYSTEM = """\
You prepare a search in a collection of short factual statements. You are given a question, one \
of its sub-questions, and the answers already found for the sub-questions it builds on.

Write a JSON object with two fields:
- "search_statement": one declarative sentence stating the fact being looked for, worded the \
way a text would state it, with the unknown part left general (for example "The Lumo kettle is \
made by a company."). Use the full names from the earlier answers; never write #1, #2, ….
- "keywords": three to six names or content words to match literally.

Reply with the JSON object only, for example:
{"search_statement": "Marie Duval was born in a city.", "keywords": ["Marie Duval", "born"]}
"""

USER = """\
Question: {question}
{known}Sub-question: {sub_question}"""


class RewriteReply(BaseModel):
    """The rewriter's reply."""

    model_config = ConfigDict(extra="ignore")

    search_statement: str = Field(description="declarative sentence for dense search")
    keywords: list[str] = Field(default_factory=list, description="terms for BM25")

    @field_validator("search_statement")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("search_statement is empty")
        return value.strip()


async def rewrite(
    llm: LlmClient,
    *,
    question: str,
    sub_question: str,
    dependencies: Sequence[tuple[str, str]],
    tag: CallTag,
) -> tuple[RewriteReply, list[LlmResult]]:
    """Ask for the search statement and keywords of one sub-question."""
    user = USER.format(
        question=question, known=known_answers(dependencies), sub_question=sub_question
    )
    return await llm.complete_json(system_and_user(SYSTEM, user), RewriteReply, tag)
