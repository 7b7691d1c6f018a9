"""Synthesis: one LLM call writes the final short answer from the chain of sub-answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from nodes.agent.evaluate import found_nothing
from nodes.citations.text import states
from nodes.llm.client import CallTag, LlmClient, LlmResult, MalformedOutput, system_and_user
from nodes.llm.reply import replay
from nodes.peers.answer import WITH_PASSAGES, AnswerReply, answer_prompt, without_aside
from nodes.prompt_blocks import findings_block
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


async def synthesize(
    llm: LlmClient,
    *,
    question: str,
    plan: str,
    chain: Sequence[tuple[str, str]],
    tag: CallTag,
) -> tuple[SynthesisReply, list[LlmResult]]:
    """Ask for the final answer and a one-line justification, from the hop answers alone.

    The reply streams to a client listening to the run's messages as the model writes it; a
    reply from the cache is streamed to it too, so a client sees the same either way.
    """
    user = USER.format(question=question, plan=plan or "(none)", findings=findings_block(chain))
    reply, results = await llm.complete_json(system_and_user(SYSTEM, user), SynthesisReply, tag)
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


def unique_ids(hop_passages: Mapping[int, Sequence[int]]) -> list[int]:
    """Every hop's passage ids, each once, in hop order."""
    return list(dict.fromkeys(i for k in sorted(hop_passages) for i in hop_passages[k]))


def answer_first(
    hop_passages: Mapping[int, Sequence[int]],
    answers: Mapping[int, str],
    texts: Mapping[int, str],
) -> dict[int, list[int]]:
    """Each hop's passages with those stating the hop's answer first, retrieval rank kept otherwise.

    The passage a hop answered from is the one the reader most needs, and it is not always the
    hop's best-ranked: read in turn with a five-passage limit, a hop's third passage is cut.
    """
    ordered: dict[int, list[int]] = {}
    for k, ids in hop_passages.items():
        answer = answers.get(k, "")
        if found_nothing(answer):  # a hop that found nothing names no passage
            ordered[k] = list(ids)
        else:
            ordered[k] = sorted(ids, key=lambda i: not states(texts.get(i, ""), answer))
    return ordered


async def read_final_answer(
    llm: LlmClient,
    *,
    question: str,
    passages: Sequence[PassageText],
    tag: CallTag,
    max_chars: int = 0,
) -> tuple[SynthesisReply, list[LlmResult]]:
    """The final answer read from the hops' passages by the peers' reader (`synthesis=reader`).

    The same prompt the dense, BM25 and PropRAG peers answer with, so a comparison with them
    differs in retrieval alone; it never refuses. The hop answers are not shown: measured with
    the offline model, they made the reader copy wrong hop answers (docs/experiments.md).
    """
    user = answer_prompt(question, passages, [], max_chars)
    reply, results = await llm.complete_json(system_and_user(WITH_PASSAGES, user), AnswerReply, tag)
    if results and results[-1].cached:
        await replay(results[-1].text)
    if not reply.answer.strip():
        error = MalformedOutput("the reader's answer is empty", results[-1].text if results else "")
        error.results = list(results)
        raise error
    why = f"read from {len(passages)} passages found for the question and its hops"
    return SynthesisReply(answer=reply.answer, justification=why), results
