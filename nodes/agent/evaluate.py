"""Evaluate: from the notes and the new evidence, write notes and either answer or search again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nodes.agent.rewrite import known_answers
from nodes.agent.select_entities import notes_block
from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from store.grasp_retrieval import Evidence

UNKNOWN = "unknown"

SYSTEM = """\
You answer one sub-question using only the evidence you are shown. Knowledge of your own does \
not count: a fact the evidence does not state is not known.

You get the sub-question, the notes made in earlier search rounds and newly retrieved evidence. \
Write a JSON object with these fields:
- "observations": up to three short, self-contained notes (full names, no pronouns) of facts in \
the new evidence that help with the sub-question; [] when nothing helps.
- "action": "DONE" when the notes and the evidence answer the sub-question, else "QUERY_AGAIN".
- "answer": with DONE, the answer as a short span (a name, a date, a number, a place, yes or \
no); with QUERY_AGAIN, "".
- "search_statement": with QUERY_AGAIN, one declarative sentence stating the fact still \
missing; with DONE, "".
- "keywords": with QUERY_AGAIN, names and content words for that fact; with DONE, [].

Reply with the JSON object only, for example:
{"observations": ["Marie Duval was born in Lyon."], "action": "DONE", "answer": "Lyon", \
"search_statement": "", "keywords": []}
"""

USER = """\
Question: {question}
{known}Sub-question: {sub_question}
{notes}New evidence:
{evidence}{last_round}"""

LAST_ROUND = """

This is the last search round: the action must be "DONE". If the evidence does not give the \
answer, answer "unknown"."""


class EvaluationReply(BaseModel):
    """The evaluator's reply."""

    model_config = ConfigDict(extra="ignore")

    observations: list[str] = Field(default_factory=list, description="new short notes")
    action: Literal["DONE", "QUERY_AGAIN"] = Field(description="answer now or search again")
    answer: str = Field(default="", description="short answer span with DONE")
    search_statement: str = Field(default="", description="the next search with QUERY_AGAIN")
    keywords: list[str] = Field(default_factory=list, description="BM25 terms with QUERY_AGAIN")

    @field_validator("action", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        # Small models write "done" or "query again"; the meaning is unambiguous.
        return value.strip().upper().replace(" ", "_") if isinstance(value, str) else value


def truncate(text: str, limit: int) -> str:
    """Cut long evidence at `limit` characters (an ellipsis marks the cut)."""
    return text if limit <= 0 or len(text) <= limit else text[: limit - 1].rstrip() + "…"


def evidence_block(evidence: Sequence[Evidence], max_chars: int) -> str:
    """Numbered evidence, each cut to `max_chars`; a line saying so when there is none."""
    if not evidence:
        return "(nothing new was found)"
    return "\n".join(
        f"[{n}] {item['title']}: {truncate(item['text'], max_chars)}"
        if item["title"]
        else f"[{n}] {truncate(item['text'], max_chars)}"
        for n, item in enumerate(evidence, start=1)
    )


async def evaluate(
    llm: LlmClient,
    *,
    question: str,
    sub_question: str,
    dependencies: Sequence[tuple[str, str]],
    observations: Sequence[str],
    evidence: Sequence[Evidence],
    last_round: bool,
    max_chars: int,
    tag: CallTag,
) -> tuple[EvaluationReply, list[LlmResult]]:
    """Judge the evidence; in the last round a QUERY_AGAIN reply is turned into DONE."""
    user = USER.format(
        question=question,
        known=known_answers(dependencies),
        sub_question=sub_question,
        notes=notes_block(observations),
        evidence=evidence_block(evidence, max_chars),
        last_round=LAST_ROUND if last_round else "",
    )
    reply, results = await llm.complete_json(system_and_user(SYSTEM, user), EvaluationReply, tag)
    if reply.action == "DONE" or last_round:
        answer = reply.answer.strip() or UNKNOWN
        reply = reply.model_copy(update={"action": "DONE", "answer": answer})
    return reply, results
