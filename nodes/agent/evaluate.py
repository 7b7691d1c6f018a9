"""Evaluate: from the notes and the new evidence, write notes and either answer or search again."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator

from nodes.agent.rewrite import known_answers
from nodes.agent.select_entities import notes_block
from nodes.llm.bounded import bounded_schema
from nodes.llm.client import CallTag, LlmClient, LlmResult, system_and_user
from store.grasp_retrieval import Evidence

UNKNOWN = "unknown"

#: free: the model states DONE or QUERY_AGAIN; quote: DONE only with a grounded evidence quote;
#: guess: an answer always, and whether the evidence states it (DONE) or it is a guess (again).
EvaluatorStyle = Literal["free", "quote", "guess"]

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

QUOTE_LAST_ROUND = """

This is the last search round: no other evidence will come."""


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


QUOTE_SYSTEM = """\
You answer one sub-question from the evidence shown, and you prove the answer by copying the \
sentence it comes from. Knowledge of your own does not count.

Write a JSON object with these fields, in this order:
- "quote": the one sentence of the evidence or the notes that answers the sub-question, copied \
word for word; "" when no sentence answers it.
- "answer": the shortest span of that sentence that answers the sub-question (keep a full name \
or a full date whole); "" when there is no quote.
- "observations": up to three short notes (full names, no pronouns) of facts in the new evidence \
that help with the sub-question; [] when nothing helps.
- "search_statement": when there is no quote, one sentence stating the fact still missing; else "".
- "keywords": when there is no quote, names and content words for that fact; else [].

Example. Sub-question: Where was Marie Duval born? Evidence: [1] Marie Duval: Marie Duval \
(1890-1950) was a French painter. She was born in Lyon and died in Paris.
{"quote": "She was born in Lyon and died in Paris.", "answer": "Lyon", "observations": \
["Marie Duval was born in Lyon."], "search_statement": "", "keywords": []}
"""


GUESS_SYSTEM = """\
You answer one sub-question from the evidence shown and the notes from earlier rounds.

Write a JSON object with two fields:
- "answer": the short span that answers the sub-question (a name, a date, a number, a place, \
yes or no), written as the evidence writes it, a full name or a full date kept whole. When the \
evidence does not settle it, your best guess; never leave it empty.
- "stated": true when a sentence of the evidence or the notes states that answer; false when it \
is a guess.

Example. Sub-question: Where was Marie Duval born? Evidence: [1] Marie Duval: Marie Duval \
(1890-1950) was a French painter. She was born in Lyon and died in Paris.
{"answer": "Lyon", "stated": true}
"""

GUESS_LAST_ROUND = """

This is the last search round: if the evidence does not state the answer, give your best guess."""


class GuessReply(BaseModel):
    """The guessing evaluator's reply: an answer always, and whether the evidence states it."""

    model_config = ConfigDict(extra="ignore")

    answer: str = Field(default="", description="short answer span, stated or guessed")
    stated: bool = Field(default=False, description="whether the evidence states the answer")


def judged_by_guess(reply: GuessReply) -> EvaluationReply:
    """DONE with a stated answer; otherwise search again, keeping the guess for the last round."""
    answer = reply.answer.strip()
    if answer and reply.stated:
        return EvaluationReply(action="DONE", answer=answer)
    # The guess rides along: `evaluate` turns it into the answer when no round is left.
    return EvaluationReply(action="QUERY_AGAIN", answer=answer)


class QuotedReply(BaseModel):
    """The quoting evaluator's reply: DONE is decided from the quote, not stated."""

    model_config = ConfigDict(extra="ignore")

    quote: str = Field(default="", description="the evidence sentence the answer comes from")
    answer: str = Field(default="", description="short answer span taken from the quote")
    observations: list[str] = Field(default_factory=list, description="new short notes")
    search_statement: str = Field(default="", description="the next search without a quote")
    keywords: list[str] = Field(default_factory=list, description="BM25 terms without a quote")


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def quote_is_grounded(quote: str, sources: Sequence[str]) -> bool:
    """Whether the quote is (nearly) a word-for-word run of one source text.

    Nearly: at least 80% of its words appear in order in one source, so a dropped comma or a
    small model's slight re-wording passes, while a sentence of its own making does not.
    """
    words = _words(quote)
    if not words:
        return False
    for source in sources:
        pool = _words(source)
        matched, position = 0, 0
        for word in words:
            try:
                position = pool.index(word, position) + 1
            except ValueError:
                continue
            matched += 1
        if matched >= 0.8 * len(words):
            return True
    return False


def judged_by_quote(
    reply: QuotedReply, evidence: Sequence[Evidence], observations: Sequence[str]
) -> EvaluationReply:
    """DONE exactly when the quote is grounded in the evidence or notes and gives an answer."""
    sources = [*(item["text"] for item in evidence), *observations]
    answer = reply.answer.strip()
    if answer and quote_is_grounded(reply.quote, sources):
        notes = list(reply.observations)
        if reply.quote.strip() not in notes:  # the proof stays in the notes for later rounds
            notes = [reply.quote.strip(), *notes][:3]
        return EvaluationReply(observations=notes, action="DONE", answer=answer)
    return EvaluationReply(
        observations=reply.observations,
        action="QUERY_AGAIN",
        search_statement=reply.search_statement,
        keywords=reply.keywords,
    )


ECHO_RECHECK = """\
"{answer}" is named in the sub-question itself, so it is not what the sub-question asks for. \
Read the evidence again for the thing that is asked, and reply with the JSON object in the same \
format."""

#: Answers that may repeat the sub-question's words ("Is X older than Y?" → "no").
_NOT_ECHOES = {UNKNOWN, "yes", "no"}


def echoes(answer: str, sub_question: str) -> bool:
    """Whether the answer's words all come from the sub-question, which it then cannot answer.

    Not for a choice ("X or Y?", answered by one of its names) or a yes/no/unknown answer.
    """
    words = set(_words(answer))
    asked = _words(sub_question)
    if not words or answer.strip().lower() in _NOT_ECHOES or "or" in asked:
        return False
    return words <= set(asked)


async def _judge(
    llm: LlmClient,
    messages: Sequence[BaseMessage],
    tag: CallTag,
    style: EvaluatorStyle,
    evidence: Sequence[Evidence],
    observations: Sequence[str],
    bounded: bool,
) -> tuple[EvaluationReply, list[LlmResult]]:
    """One evaluator call in either reply style, as an EvaluationReply."""
    reply_type = _REPLY[style]
    json_schema = bounded_schema(reply_type) if bounded else None
    reply, results = await llm.complete_json(messages, reply_type, tag, json_schema=json_schema)
    if isinstance(reply, QuotedReply):
        return judged_by_quote(reply, evidence, observations), results
    if isinstance(reply, GuessReply):
        return judged_by_guess(reply), results
    assert isinstance(reply, EvaluationReply)
    return reply, results


_SYSTEM = {"free": SYSTEM, "quote": QUOTE_SYSTEM, "guess": GUESS_SYSTEM}
_REPLY: dict[EvaluatorStyle, type[EvaluationReply] | type[QuotedReply] | type[GuessReply]] = {
    "free": EvaluationReply,
    "quote": QuotedReply,
    "guess": GuessReply,
}
_LAST_ROUND = {"free": LAST_ROUND, "quote": QUOTE_LAST_ROUND, "guess": GUESS_LAST_ROUND}


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
    style: EvaluatorStyle = "free",
    echo_check: bool = False,
    bounded: bool = False,
) -> tuple[EvaluationReply, list[LlmResult]]:
    """Judge the evidence; in the last round a QUERY_AGAIN reply is turned into DONE.

    `style="quote"` asks for the sentence the answer comes from and decides DONE from it, since
    small models say QUERY_AGAIN with the answer in view and DONE with an answer of their own.
    `style="guess"` asks for an answer always (a best guess when the evidence does not settle
    it) and whether the evidence states it: a short reply, and no "unknown" at the end.
    `echo_check` asks once more when the answer only repeats the sub-question's own words (a
    small model's usual slip: "Which state borders Florida?" → "Florida"); the second reply
    stands, whatever it says. `bounded` holds the reply to `nodes.llm.bounded.bounded_schema`.
    """
    user = USER.format(
        question=question,
        known=known_answers(dependencies),
        sub_question=sub_question,
        notes=notes_block(observations),
        evidence=evidence_block(evidence, max_chars),
        last_round=_LAST_ROUND[style] if last_round else "",
    )
    messages = system_and_user(_SYSTEM[style], user)
    reply, results = await _judge(llm, messages, tag, style, evidence, observations, bounded)
    if echo_check and reply.action == "DONE" and echoes(reply.answer, sub_question):
        recheck = [
            *messages,
            AIMessage(content=results[-1].text),
            HumanMessage(content=ECHO_RECHECK.format(answer=reply.answer.strip())),
        ]
        reply, more = await _judge(llm, recheck, tag, style, evidence, observations, bounded)
        results = [*results, *more]
    if reply.action == "DONE" or last_round:
        answer = reply.answer.strip() or UNKNOWN
        reply = reply.model_copy(update={"action": "DONE", "answer": answer})
    return reply, results
