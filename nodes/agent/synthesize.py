"""Synthesis: one LLM call writes the final short answer from the chain of sub-answers."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from nodes.llm.reply import replay

SYSTEM = """\
You give the final answer to a question that was split into sub-questions. You get the \
question, the plan and each sub-question with the answer a search found for it. Use only those \
answers; where they say "unknown", the final answer may be "unknown" too.

The answer is compared word for word with a reference, so make it as short as possible: just \
the name, date, number, place, or yes/no, with no sentence around it. For a comparison, give \
the winning item itself (for example the name, not "the first one").

Reply with a JSON object only: {"answer": "...", "justification": "one sentence on why"}
"""

USER = """\
Question: {question}
Plan: {plan}
Findings:
{findings}"""


class SynthesisReply(BaseModel):
    """The synthesiser's reply."""

    model_config = ConfigDict(extra="ignore")

    answer: str = Field(description="short answer span")
    justification: str = Field(default="", description="one line on why")

    @field_validator("answer")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("answer is empty")
        return value.strip()


def findings_block(chain: Sequence[tuple[str, str]]) -> str:
    """The ordered (sub-question, answer) chain, one numbered line each."""
    return "\n".join(
        f"{n}. {question} → {answer}" for n, (question, answer) in enumerate(chain, start=1)
    )


async def synthesize(
    llm: LlmClient,
    *,
    question: str,
    plan: str,
    chain: Sequence[tuple[str, str]],
    tag: CallTag,
) -> tuple[SynthesisReply, list[LlmResult]]:
    """Ask for the final answer and a one-line justification.

    The reply streams to a client listening to the run's messages as the model writes it; a
    reply from the cache is streamed to it too, so a client sees the same either way.
    """
    user = USER.format(question=question, plan=plan or "(none)", findings=findings_block(chain))
    reply, results = await llm.complete_json(system_and_user(SYSTEM, user), SynthesisReply, tag)
    if results and results[-1].cached:
        await replay(results[-1].text)
    return reply, results
