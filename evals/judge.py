"""The LLM judge: a strict and a lenient yes/no verdict on a prediction against the gold answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from nodes.llm.client import CallTag, LlmClient, LlmResult, MalformedOutput, system_and_user

STRICT = """\
You grade answers to quiz questions. You get a question, the reference answer (with accepted \
alternatives) and a predicted answer. Say "yes" only if the prediction means the same thing as \
the reference: the same person, place, date, number or fact, allowing for different wording, \
spelling, abbreviations or extra words that do not change the meaning. Say "no" if it is a \
different thing, less specific, more than one candidate, a refusal, or "unknown".

Reply with a JSON object only: {"verdict": "yes"} or {"verdict": "no"}
"""

LENIENT = """\
You grade answers to quiz questions generously. You get a question, the reference answer (with \
accepted alternatives) and a predicted answer. Say "yes" if the prediction is correct or \
partially correct: it names the reference or contains it, is a close paraphrase, or gets the \
essential part right (for example the right year of a full date, or the right person with a \
wrong title). Say "no" if it is wrong, a refusal, or "unknown".

Reply with a JSON object only: {"verdict": "yes"} or {"verdict": "no"}
"""

USER = """\
Question: {question}
Reference answer: {reference}
Accepted alternatives: {aliases}
Predicted answer: {prediction}"""


class VerdictReply(BaseModel):
    """The judge's reply."""

    model_config = ConfigDict(extra="ignore")

    verdict: Literal["yes", "no"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower().rstrip(".") if isinstance(value, str) else value


@dataclass(frozen=True)
class Verdicts:
    """Both verdicts, the judge's own token cost (never billed to the system) and any problem."""

    strict: bool
    lenient: bool
    input_tokens: int
    output_tokens: int
    note: str | None = None


def judge_prompt(question: str, prediction: str, golds: Sequence[str]) -> str:
    """The user message both verdicts share."""
    aliases = "; ".join(golds[1:]) or "(none)"
    return USER.format(
        question=question, reference=golds[0], aliases=aliases, prediction=prediction or "(empty)"
    )


async def _verdict(
    client: LlmClient, system: str, user: str, tag: CallTag
) -> tuple[bool, list[LlmResult], str | None]:
    try:
        reply, results = await client.complete_json(
            system_and_user(system, user), VerdictReply, tag
        )
    except MalformedOutput as exc:
        # An unreadable verdict is a "no": the judge must never inflate the score.
        return False, list(exc.results), f"{tag.node}: unreadable verdict ({exc})"
    return reply.verdict == "yes", results, None


async def judge_answer(
    client: LlmClient, question: str, prediction: str, golds: Sequence[str], run_id: str
) -> Verdicts:
    """Ask the strict and the lenient judge; an empty prediction is "no" without a call."""
    if not prediction.strip():
        return Verdicts(False, False, 0, 0, None)
    user = judge_prompt(question, prediction, golds)
    strict, strict_calls, strict_note = await _verdict(
        client, STRICT, user, CallTag(node="judge_strict", run_id=run_id)
    )
    lenient, lenient_calls, lenient_note = await _verdict(
        client, LENIENT, user, CallTag(node="judge_lenient", run_id=run_id)
    )
    calls = [*strict_calls, *lenient_calls]
    notes = [n for n in (strict_note, lenient_note) if n]
    return Verdicts(
        strict=strict,
        # A strictly correct answer is also partially correct, whatever the lenient call said.
        lenient=lenient or strict,
        input_tokens=sum(c.input_tokens for c in calls),
        output_tokens=sum(c.output_tokens for c in calls),
        note="; ".join(notes) or None,
    )
