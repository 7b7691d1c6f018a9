"""The peers' answer steps: a short answer from passages and notes, from findings, or closed-book."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, field_validator

from nodes.llm.client import CallTag, LlmClient, LlmResult, MalformedOutput, system_and_user
from nodes.prompt_blocks import notes_block, passages_block
from store.retrieval import PassageText

WITH_PASSAGES = """\
Answer the question from the passages you are given and the notes, if there are any. The facts \
you need may sit in different passages: link them. When the passages do not settle it, give \
your best guess; never refuse.

The answer is scored word for word against a reference, so write only the short answer itself \
(a name, date, number, place, or yes/no), with no sentence around it.

Reply with a JSON object only, for example: {"answer": "1987"}
"""

CLOSED_BOOK = """\
Answer the question from your own knowledge; no passages are given. Never refuse: give your \
best guess.

The answer is scored word for word against a reference, so write only the short answer itself \
(a name, date, number, place, or yes/no), with no sentence around it.

Reply with a JSON object only, for example: {"answer": "1987"}
"""


FROM_FINDINGS = """\
Answer a question that was split into sub-questions, from the answers found for them. Link \
the findings to reach the answer; when they do not settle it, give your best guess.

The answer is scored word for word against a reference, so write only the short answer itself \
(a name, date, number, place, or yes/no), with no sentence around it. For a comparison, give the \
winning item itself.

Reply with a JSON object only, for example: {"answer": "1987"}
"""


#: A parenthetical at the very end of an answer: "6.8 inches (17.3 cm)", "Paris (France)".
TRAILING_ASIDE = re.compile(r"\s*\([^()]*\)\s*$")


def without_aside(answer: str) -> str:
    """`answer` stripped, without a closing parenthetical aside when words stand before it.

    The readers are asked for the short span alone, yet a small model often copies the aside
    that follows it in the passage (a converted unit, a country, an alias); the reference span
    never holds one (none of the 253 gold answers and aliases in our MuSiQue and HotpotQA files
    does), and word-for-word scoring counts the aside's words as wrong.
    """
    answer = answer.strip()
    shorter = TRAILING_ASIDE.sub("", answer)
    return shorter if shorter.strip() else answer


class AnswerReply(BaseModel):
    """The reply: one short answer span."""

    model_config = ConfigDict(extra="ignore")

    answer: str

    @field_validator("answer")
    @classmethod
    def _short_span(cls, value: str) -> str:
        return without_aside(value)


@dataclass(frozen=True)
class AnswerOutcome:
    """The answer (empty when the reply never parsed), the calls it cost, and why it failed."""

    answer: str
    results: list[LlmResult]
    error: str | None = None


def passage_cut(max_chars: int, budget: int, count: int) -> int:
    """Each of `count` passages' cut: `max_chars` (0: none), lowered so that they fit in `budget`.

    A small model's context window holds a few thousand tokens; PRISM's pool of twenty passages
    per query can hold a hundred. `budget` = 0 keeps `max_chars`.
    """
    if budget <= 0 or count <= 0:
        return max_chars
    share = max(budget // count, 1)
    return share if max_chars <= 0 else min(max_chars, share)


def answer_prompt(
    question: str, passages: Sequence[PassageText], notes: Sequence[str], max_chars: int
) -> str:
    """The user message of a with-passages answer call."""
    notes_section = notes_block(notes, heading="Notes:", gap="\n")
    return (
        f"{notes_section}Passages:\n{passages_block(passages, max_chars)}\n\nQuestion: {question}"
    )


async def ask_for_answer(llm: LlmClient, system: str, user: str, tag: CallTag) -> AnswerOutcome:
    """One answer call; an unreadable reply gives an empty answer and keeps its cost."""
    try:
        reply, results = await llm.complete_json(system_and_user(system, user), AnswerReply, tag)
    except MalformedOutput as exc:
        return AnswerOutcome("", list(exc.results), f"answer unreadable: {exc}")
    return AnswerOutcome(reply.answer.strip(), results)


async def answer_from_passages(
    llm: LlmClient,
    *,
    question: str,
    passages: Sequence[PassageText],
    notes: Sequence[str] = (),
    max_chars: int = 0,
    tag: CallTag,
) -> AnswerOutcome:
    """Answer `question` from `passages` (each cut to `max_chars`) and `notes`."""
    user = answer_prompt(question, passages, notes, max_chars)
    return await ask_for_answer(llm, WITH_PASSAGES, user, tag)


async def answer_closed_book(llm: LlmClient, *, question: str, tag: CallTag) -> AnswerOutcome:
    """Answer `question` with no context at all."""
    return await ask_for_answer(llm, CLOSED_BOOK, f"Question: {question}", tag)


async def answer_from_findings(
    llm: LlmClient, *, question: str, findings: Sequence[str], tag: CallTag
) -> AnswerOutcome:
    """Answer `question` from the (sub-question → answer) findings alone."""
    lines = "\n".join(f"{n}. {item}" for n, item in enumerate(findings, start=1))
    return await ask_for_answer(
        llm, FROM_FINDINGS, f"Findings:\n{lines}\n\nQuestion: {question}", tag
    )
