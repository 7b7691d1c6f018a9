"""Evaluate: from the notes and the new evidence, write notes and either answer or search again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nodes.citations.text import normalise
from nodes.llm.bounded import bounded_schema, with_fields
from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from nodes.prompt_blocks import evidence_block, known_answers, notes_block
from store.grasp_retrieval import Evidence

UNKNOWN = "unknown"


def found_nothing(answer: str) -> bool:
    """Whether a hop's answer is "unknown" (in any case or punctuation): it found nothing."""
    return normalise(answer) == UNKNOWN


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

#: The same duties in half the prompt tokens (`evaluator_prompt=brief`): with a bounded reply the
#: grammar already holds the JSON's shape, so the example and the format prose can go.
BRIEF_SYSTEM = """\
You answer one sub-question from the evidence shown; a fact it does not state is not known.
Reply in JSON. "observations": up to three short notes of helpful facts, with full names. \
"action": "DONE" if the notes and evidence answer the sub-question, else "QUERY_AGAIN". \
"answer": with DONE the short answer (a name, date, number, place, or yes/no), else "". \
"search_statement": with QUERY_AGAIN one sentence stating the missing fact, else "". \
"keywords": with QUERY_AGAIN names and words for that fact, else [].
"""

#: Each `evaluator_prompt` choice's instructions.
INSTRUCTIONS = {"full": SYSTEM, "brief": BRIEF_SYSTEM}

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


def reply_schema(last_round: bool) -> dict[str, Any]:
    """The bounded reply, its tail held to its action; in the last round only DONE.

    A DONE reply's search statement and keywords are empty, and a QUERY_AGAIN reply's answer:
    the prompt says so, but the local model filled all five fields (≈ 30 output tokens a call
    that nothing read). The fields before the action are the same in both branches, so a DONE
    reply's notes and answer are what they were. The empty fields stay, though: ended at its
    answer, a DONE reply lost the `",` token that closes the answer before the next field, and
    the 1.5B model ran its answer on into lists of names (docs/experiments.md).
    """
    base = bounded_schema(EvaluationReply)
    done = with_fields(
        base,
        action={"enum": ["DONE"]},
        search_statement={"enum": [""]},
        keywords={"type": "array", "items": {"type": "string"}, "maxItems": 0},
    )
    if last_round:
        return done
    again = with_fields(base, action={"enum": ["QUERY_AGAIN"]}, answer={"enum": [""]})
    return {"anyOf": [done, again]}


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
    bounded: bool = False,
    instructions: str = "full",
) -> tuple[EvaluationReply, list[LlmResult]]:
    """Judge the evidence; in the last round a QUERY_AGAIN reply is turned into DONE.

    `bounded` holds the reply to `reply_schema` (strings and lists capped, so a
    grammar-constrained reply always closes, and the fields its action leaves unused empty);
    `instructions` picks the system prompt (`INSTRUCTIONS`).
    """
    user = USER.format(
        question=question,
        known=known_answers(dependencies),
        sub_question=sub_question,
        notes=notes_block(observations),
        evidence=evidence_block(evidence, max_chars),
        last_round=LAST_ROUND if last_round else "",
    )
    json_schema = reply_schema(last_round) if bounded else None
    reply, results = await llm.complete_json(
        system_and_user(INSTRUCTIONS[instructions], user),
        EvaluationReply,
        tag,
        json_schema=json_schema,
    )
    if reply.action == "DONE" or last_round:
        answer = reply.answer.strip() or UNKNOWN
        reply = reply.model_copy(update={"action": "DONE", "answer": answer})
    return reply, results
