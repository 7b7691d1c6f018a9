"""A peer's answer cited from the passages its answer step read, as GRASP's are (nodes/citations).

One store read; no model call. A peer that answered sub-questions (Self-Ask) cites each of
their answers too, as GRASP cites its hops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from graphs.agent.chat_messages import answer_message
from graphs.peers.state import PeerState
from graphs.runtime.services import Services
from nodes.citations.attribution import Citation, Claim, ReadText, cite_answer
from store.citation_reads import cited_texts


async def peer_citations(
    services: Services, state: PeerState, answer: str, hops: Sequence[tuple[str, str]] = ()
) -> list[Citation]:
    """The citations of `answer` (and of each (sub-question, answer) in `hops`).

    Every claim may stand in any passage shown, in the order shown; none when no passage was.
    """
    ids = state.get("passages", [])
    corpus = state.get("corpus_id")
    if not ids or corpus is None:
        return []
    passages, _ = await asyncio.to_thread(cited_texts, services.engine, corpus, ids)
    read = tuple(
        ReadText(p.passage_id, p.title, p.source, p.text)
        for p in (passages.get(pid) for pid in ids)
        if p is not None
    )
    claims = [Claim(q, a, read, hop=n) for n, (q, a) in enumerate(hops, start=1)]
    return cite_answer(Claim(state["question"], answer, read), claims)


def reply_update(answer: str, citations: list[Citation]) -> dict[str, Any]:
    """The state update that gives a peer's answer its sources and its AI message."""
    return {"citations": citations, "messages": [answer_message(answer, citations)]}
