"""The passages GRASP's reader reads: the hops' passages, answer-stating ones first, in turn."""

from __future__ import annotations

import asyncio

from graphs.agent.state import GraspState
from graphs.runtime.services import Services
from nodes.agent.synthesize import answer_first, reading_order, unique_ids
from store.passage_search import passages_by_id
from store.retrieval import PassageText


async def hop_passage_texts(services: Services, state: GraspState, limit: int) -> list[PassageText]:
    """The hops' passages the reader reads, each once, ≤ `limit`.

    Each hop's passages that state its answer come first (`answer_first`), then hops are read in
    turn (`reading_order`): the passage a hop answered from is the one the reader most needs.
    """
    hops = state.get("hop_passages", {})
    if not hops:
        return []
    found = await asyncio.to_thread(passages_by_id, services.engine, unique_ids(hops))
    texts = {p.id: p for p in found}
    hops = answer_first(
        hops, state.get("answers", {}), {p.id: f"{p.title}. {p.text}" for p in found}
    )
    return [texts[i] for i in reading_order(hops, limit) if i in texts]
