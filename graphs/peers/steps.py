"""The steps every peer graph shares: start a run afresh, and answer from the shown passages."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from graphs.agent.chat_messages import turn_question
from graphs.agent.state import TokenTally, tally
from graphs.peers.cite import peer_citations, reply_update
from graphs.peers.context import PeerContext
from graphs.peers.state import PeerState
from graphs.runtime.services import Services
from graphs.runtime.wiring import Wiring, run_id
from nodes.llm.client import CallTag
from nodes.peers.answer import answer_from_passages
from store.corpora import corpus_id
from store.passage_search import passages_by_id
from store.retrieval import PassageText

C = TypeVar("C", bound=PeerContext)

#: Passage ids for (services, corpus id, query, context), best first; called off the loop.
Retriever = Callable[[Services, int, str, Any], list[int]]


def call_tag(node: str, state: PeerState, iteration: int | None = None) -> CallTag:
    """The ledger tag of a peer's LLM call (the run id is the thread id)."""
    return CallTag(
        node=node, corpus_id=state.get("corpus_id"), run_id=run_id(), iteration=iteration
    )


def empty_tally() -> TokenTally:
    """A tally of no calls."""
    return tally("start", [])


async def fetch_passages(services: Services, ids: list[int]) -> list[PassageText]:
    """Titles and texts of passages, in the order of `ids` (off the event loop)."""
    return await asyncio.to_thread(passages_by_id, services.engine, ids)


async def embed_one(services: Services, text: str) -> Any:
    """One text's embedding (off the event loop)."""
    vectors = await asyncio.to_thread(services.embedder.embed, [text])
    return vectors[0]


@dataclass(frozen=True)
class PeerSteps(Generic[C]):
    """`start` and `answer`, the first and last node of most peers."""

    wiring: Wiring[C]
    #: False for closed-book answering, which reads no corpus.
    needs_corpus: bool = True

    async def start(self, state: PeerState, runtime: Runtime[C]) -> dict[str, Any]:
        """Check the question and corpus, and clear what an earlier run on the thread left."""
        context, services = await self.wiring.resolve(runtime)
        question, asked = turn_question(state)
        if not question:
            raise ValueError("the question is empty")
        corpus = None
        if self.needs_corpus:
            # A missing corpus fails here, before any tokens are spent.
            corpus = await asyncio.to_thread(corpus_id, services.engine, context.corpus)
        return {
            "question": question,
            "corpus_id": corpus,
            "passages": [],
            "notes": [],
            "final_answer": "",
            "citations": [],
            "error": None,
            "budget_stopped": False,
            # A new question on a used thread starts from scratch: the reducer would add.
            "tokens": Overwrite(empty_tally()),
            "messages": asked,
        }

    async def retrieve(
        self, retriever: Retriever, state: PeerState, runtime: Runtime[C], query: str
    ) -> list[int]:
        """Passage ids `retriever` finds for `query` in the run's corpus, run off the loop."""
        context, services = await self.wiring.resolve(runtime)
        corpus = state.get("corpus_id")
        assert corpus is not None  # the start step resolved it
        return await asyncio.to_thread(retriever, services, corpus, query, context)

    async def answer(self, state: PeerState, runtime: Runtime[C]) -> dict[str, Any]:
        """One answer call over the passages in state (cut by `passage_chars`) and the notes."""
        context, services = await self.wiring.resolve(runtime)
        passages = await fetch_passages(services, state.get("passages", []))
        outcome = await answer_from_passages(
            services.llm,
            question=state["question"],
            passages=passages,
            notes=state.get("notes", []),
            max_chars=context.passage_chars(len(passages)),
            tag=call_tag("answer", state),
        )
        update: dict[str, Any] = {
            "final_answer": outcome.answer,
            "tokens": tally("answer", outcome.results),
            **await self.reply(state, runtime, outcome.answer),
        }
        if outcome.error:
            update["error"] = outcome.error
        return update

    async def reply(
        self,
        state: PeerState,
        runtime: Runtime[C],
        answer: str,
        hops: Sequence[tuple[str, str]] = (),
    ) -> dict[str, Any]:
        """The answer's citations and its AI message, for the answer step's update."""
        _, services = await self.wiring.resolve(runtime)
        return reply_update(answer, await peer_citations(services, state, answer, hops))
