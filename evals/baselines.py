"""Non-agentic baselines: dense or BM25 top-k passages and one answer call, or closed-book."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict
from sqlalchemy import Engine

from nodes.embedding import Embedder
from nodes.llm.client import CallTag, LlmClient, LlmResult, MalformedOutput, system_and_user
from store.passage_search import passages_by_id, ranked_bm25_passages, ranked_dense_passages
from store.retrieval import PassageText

PassageMethod = Literal["dense", "bm25"]
DEFAULT_K = 5

WITH_PASSAGES = """\
You answer a question using the numbered passages given. The question may need facts from \
more than one passage: connect them. If the passages do not contain the answer, give your best \
guess.

Your answer is compared word for word with a reference, so give only the short answer itself: \
a name, date, number, place, or yes/no, with no sentence, explanation or punctuation around it.

Reply with a JSON object only: {"answer": "..."}
"""

CLOSED_BOOK = """\
You answer a question from your own knowledge; no documents are given. Always give your best \
guess, never refuse.

Your answer is compared word for word with a reference, so give only the short answer itself: \
a name, date, number, place, or yes/no, with no sentence, explanation or punctuation around it.

Reply with a JSON object only: {"answer": "..."}
"""


class AnswerReply(BaseModel):
    """The baseline's reply: a short answer span."""

    model_config = ConfigDict(extra="ignore")

    answer: str


@dataclass(frozen=True)
class Answer:
    """A method's prediction with the system tokens and calls it cost."""

    prediction: str
    input_tokens: int
    output_tokens: int
    calls: int
    note: str | None = None
    passages: tuple[int, ...] = ()


def top_passages(
    engine: Engine, embedder: Embedder, corpus: int, query: str, method: PassageMethod, k: int
) -> list[PassageText]:
    """The k best passages for `query` by passage-embedding cosine (dense) or BM25."""
    if method == "dense":
        ranked = ranked_dense_passages(engine, corpus, embedder.embed([query])[0], k)
    else:
        ranked = ranked_bm25_passages(engine, corpus, query, k)
    return passages_by_id(engine, ranked)


def passages_block(passages: Sequence[PassageText]) -> str:
    """The numbered passages of the answer prompt."""
    if not passages:
        return "(no passages were found)"
    return "\n\n".join(f"[{n}] {p.title}\n{p.text}" for n, p in enumerate(passages, start=1))


async def ask(
    client: LlmClient, system: str, user: str, tag: CallTag
) -> tuple[str, list[LlmResult], str | None]:
    """One answer call; an unparseable reply gives an empty prediction and keeps its cost."""
    try:
        reply, results = await client.complete_json(system_and_user(system, user), AnswerReply, tag)
    except MalformedOutput as exc:
        return "", list(exc.results), f"answer unreadable: {exc}"
    return reply.answer.strip(), results, None


def _answer(
    prediction: str, results: list[LlmResult], note: str | None, ids: tuple[int, ...]
) -> Answer:
    return Answer(
        prediction=prediction,
        input_tokens=sum(r.input_tokens for r in results),
        output_tokens=sum(r.output_tokens for r in results),
        calls=len(results),
        note=note,
        passages=ids,
    )


async def answer_with_passages(
    client: LlmClient,
    engine: Engine,
    embedder: Embedder,
    corpus: int,
    question: str,
    method: PassageMethod,
    run_id: str,
    k: int = DEFAULT_K,
) -> Answer:
    """Dense or BM25 RAG: retrieve the top-k passages, then one answer call."""
    passages = await asyncio.to_thread(top_passages, engine, embedder, corpus, question, method, k)
    user = f"Passages:\n{passages_block(passages)}\n\nQuestion: {question}"
    tag = CallTag(node=f"{method}_answer", corpus_id=corpus, run_id=run_id)
    prediction, results, note = await ask(client, WITH_PASSAGES, user, tag)
    return _answer(prediction, results, note, tuple(p.id for p in passages))


async def answer_closed_book(
    client: LlmClient, question: str, run_id: str, node: str = "closed_book"
) -> Answer:
    """No context: the model answers from what it knows (also the p_i sampler's prompt)."""
    tag = CallTag(node=node, run_id=run_id)
    prediction, results, note = await ask(client, CLOSED_BOOK, f"Question: {question}", tag)
    return _answer(prediction, results, note, ())
