"""Synthesis: one LLM call writes the final short answer from the chain of sub-answers."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nodes.agent.evaluate import UNKNOWN, truncate
from nodes.llm.client import CallTag, LlmClient, LlmResult, MalformedOutput, system_and_user
from nodes.llm.reply import replay
from nodes.peers.answer import WITH_PASSAGES, AnswerReply, answer_prompt, without_aside
from store.retrieval import PassageText

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

READING_SYSTEM = """\
You give the final answer to a question that was split into sub-questions. You get the \
question, each sub-question with the answer a search found for it, and the passages those \
answers were read from. The findings show the path from the question to its answer; the \
passages are the proof. Where a finding and its passage disagree, trust the passage. Answer \
from these alone; if they do not give the answer, say "unknown".

The answer is compared word for word with a reference, so make it as short as possible: just \
the name, date, number, place, or yes/no, with no sentence around it. For a comparison, give \
the winning item itself.

Reply with a JSON object only: {"answer": "...", "justification": "one sentence on why"}
"""

PASSAGES = """
Passages:
{passages}"""


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
        return without_aside(value)


def findings_block(chain: Sequence[tuple[str, str]]) -> str:
    """The ordered (sub-question, answer) chain, one numbered line each."""
    return "\n".join(
        f"{n}. {question} → {answer}" for n, (question, answer) in enumerate(chain, start=1)
    )


def passages_block(passages: Sequence[PassageText], max_chars: int) -> str:
    """Numbered passages, each cut to `max_chars` (0: whole)."""
    return "\n".join(
        f"[{n}] {p.title}: {truncate(p.text, max_chars)}" for n, p in enumerate(passages, start=1)
    )


async def synthesize(
    llm: LlmClient,
    *,
    question: str,
    plan: str,
    chain: Sequence[tuple[str, str]],
    tag: CallTag,
    passages: Sequence[PassageText] = (),
    max_chars: int = 0,
) -> tuple[SynthesisReply, list[LlmResult]]:
    """Ask for the final answer and a one-line justification.

    With `passages` (the ones the hop answers were read from) the answer is read from them,
    the hop answers guiding: a small model's hop answer is often a wrong span of a right passage.
    The reply streams to a client listening to the run's messages as the model writes it; a
    reply from the cache is streamed to it too, so a client sees the same either way.
    """
    user = USER.format(question=question, plan=plan or "(none)", findings=findings_block(chain))
    if passages:
        user += PASSAGES.format(passages=passages_block(passages, max_chars))
    system = READING_SYSTEM if passages else SYSTEM
    reply, results = await llm.complete_json(system_and_user(system, user), SynthesisReply, tag)
    if results and results[-1].cached:
        await replay(results[-1].text)
    return reply, results


def reading_order(hop_passages: Mapping[int, Sequence[int]], limit: int) -> list[int]:
    """Passage ids taken in turn from each hop's ranked list (hops in order), each once, ≤ `limit`.

    In turn, not hop after hop: with five passages and two hops the second hop's best passage
    must not be crowded out by the first hop's fourth.
    """
    lists = [hop_passages[k] for k in sorted(hop_passages)]
    order: dict[int, None] = {}
    for rank in range(max((len(ids) for ids in lists), default=0)):
        for ids in lists:
            if rank < len(ids) and len(order) < limit:
                order.setdefault(ids[rank])
    return list(order)


def final_focused_order(
    hop_passages: Mapping[int, Sequence[int]], final_hops: Collection[int], limit: int
) -> list[int]:
    """Each bridge hop's best passage, then the final hops' in turn, then the rest, ≤ `limit`.

    Final hops are those no other hop builds on: their passages hold the answer, while a bridge
    hop needs only its best one to show the link. Ids are taken each once, bridges in hop order.
    """
    bridges = [k for k in sorted(hop_passages) if k not in final_hops and hop_passages[k]]
    order = dict.fromkeys(hop_passages[k][0] for k in bridges[:limit])
    finals = {k: ids for k, ids in hop_passages.items() if k in final_hops}
    for pid in [*reading_order(finals, limit), *reading_order(hop_passages, limit)]:
        if len(order) < limit:
            order.setdefault(pid)
    return list(order)


async def read_final_answer(
    llm: LlmClient,
    *,
    question: str,
    chain: Sequence[tuple[str, str]],
    passages: Sequence[PassageText],
    tag: CallTag,
    max_chars: int = 0,
    notes: bool = True,
) -> tuple[SynthesisReply, list[LlmResult]]:
    """The final answer read from the hops' passages by the peers' reader (`synthesis=reader`).

    The same prompt the dense, BM25 and PropRAG peers answer with, so a comparison with them
    differs in retrieval alone; it never refuses. With `notes`, the hop answers that were found
    go in as notes.
    """
    shown = [f"{sub} → {answer}" for sub, answer in chain if answer != UNKNOWN] if notes else []
    user = answer_prompt(question, passages, shown, max_chars)
    reply, results = await llm.complete_json(system_and_user(WITH_PASSAGES, user), AnswerReply, tag)
    if results and results[-1].cached:
        await replay(results[-1].text)
    if not reply.answer.strip():
        error = MalformedOutput("the reader's answer is empty", results[-1].text if results else "")
        error.results = list(results)
        raise error
    why = f"read from {len(passages)} passages of the hops" + (
        ", the hop answers as notes" if shown else ""
    )
    return SynthesisReply(answer=reply.answer, justification=why), results
