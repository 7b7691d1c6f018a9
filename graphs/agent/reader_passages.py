"""The passages GRASP's reader reads: the hops' passages, answer-stating ones first, in turn.

An inner hop (one a later step builds on) hands on only its first: the passage its answer came
from. Its other passages are about the bridge entity, and they led the small reader to answer
with it; the last hops' passages fill the places. The last place goes to the whole question's
best passage when the hops did not find it: a plan that asked the wrong sub-questions still
leaves the reader the passage a one-pass reader would have read (docs/experiments.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from graphs.agent.chat_messages import conversation_history
from graphs.agent.context import GraspContext
from graphs.agent.hop_reads import HopRead
from graphs.agent.state import GraspState
from graphs.runtime.services import Services
from nodes.agent.evaluate import found_nothing
from nodes.agent.plan_dag import SubQuestion, inner_hops
from nodes.agent.search import best_passage
from nodes.agent.synthesize import answer_first, reading_order, unique_ids
from store.passage_search import passages_by_id
from store.retrieval import PassageText


def unknown_hops_first_round(
    hop_passages: Mapping[int, Sequence[int]],
    answers: Mapping[int, str],
    hop_reads: Mapping[int, HopRead],
) -> dict[int, list[int]]:
    """Each hop's passages, with a hop that searched again and found nothing given its first round's.

    Such a hop's last round is its most drifted search (each retry rewords it and leaves out
    what was seen), while its first searched the sub-question itself: "What is the height of
    the Pterocarya plant?" found the Pterocarya passage first and junk by its third round.
    """
    chosen = {k: list(ids) for k, ids in hop_passages.items()}
    for k, read in hop_reads.items():
        rounds = read["rounds"]
        if k in chosen and len(rounds) > 1 and found_nothing(answers.get(k, "")):
            chosen[k] = list(rounds[0]["ids"][: len(chosen[k])])
    return chosen


def inner_hops_first_only(
    hops: Mapping[int, Sequence[int]], sub_questions: Sequence[SubQuestion]
) -> dict[int, list[int]]:
    """Each hop's passages, an inner hop's cut to its first."""
    inner = inner_hops(sub_questions)
    return {k: list(ids[:1] if k in inner else ids) for k, ids in hops.items()}


async def question_passage(
    services: Services, state: GraspState, context: GraspContext
) -> int | None:
    """The whole question's best passage, for the reader (None where the synthesis reads none).

    A follow-up turn ("Where was he born?") names its subject only in the exchange before it,
    so that exchange is searched with it.
    """
    corpus = state.get("corpus_id")
    if context.synthesis != "reader" or corpus is None:
        return None
    query = state["question"]
    earlier = conversation_history(state, state.get("turns", []))
    if earlier:
        asked, answered = earlier[-1]
        query = f"{asked} {answered} {query}"
    return await best_passage(
        services, corpus_id=corpus, question=query, params=context.retrieval_params()
    )


async def hop_passage_texts(
    services: Services, state: GraspState, limit: int, question_best: int | None = None
) -> list[PassageText]:
    """The hops' passages the reader reads, each once, ≤ `limit`.

    Each hop's passages that state its answer come first (`answer_first`), then hops are read in
    turn (`reading_order`): the passage a hop answered from is the one the reader most needs.
    An inner hop gives that passage alone (`inner_hops_first_only`). `question_best`, the whole
    question's best passage, takes the last place when the hops' passages do not hold it.
    """
    answers = state.get("answers", {})
    hops = unknown_hops_first_round(
        state.get("hop_passages", {}), answers, state.get("hop_reads", {})
    )
    if not hops:
        return []
    extra = [] if question_best is None else [question_best]
    found = await asyncio.to_thread(
        passages_by_id, services.engine, list(dict.fromkeys(unique_ids(hops) + extra))
    )
    texts = {p.id: p for p in found}
    hops = answer_first(hops, answers, {p.id: f"{p.title}. {p.text}" for p in found})
    hops = inner_hops_first_only(hops, state.get("sub_questions", []))
    ids = reading_order(hops, limit)
    if question_best is not None and question_best not in ids:
        ids = ids[: limit - 1] + [question_best]
    return [texts[i] for i in ids if i in texts]
