"""Zero-token checks on the reader's final answer: the bridge check and the yes check."""

from __future__ import annotations

import asyncio
import logging

from graphs.agent.context import GraspContext, chosen
from graphs.agent.state import GraspState
from graphs.runtime.services import Services
from nodes.agent.bridge_check import bridge_slip
from nodes.agent.yes_check import says_yes, unsupported_yes
from store.passage_search import passages_by_id

log = logging.getLogger(__name__)


async def checked_answer(
    services: Services, state: GraspState, context: GraspContext, answer: str, why: str
) -> tuple[str, str]:
    """The answer and its justification after both checks; unchanged when neither applies.

    `bridge_check` mends a bridge slip; a "yes" whose yes/no step's subject passage leaves the
    step's predicate unsaid becomes "no" (nodes/agent/yes_check.py).
    """
    sub_questions = state.get("sub_questions", [])
    slip = (
        bridge_slip(answer, sub_questions, state.get("answers", {}))
        if chosen(context.bridge_check, "bridge_check")
        else None
    )
    if slip:
        log.info("bridge check: %s", slip.why())
        return slip.answer, slip.why()
    hop_passages = state.get("hop_passages", {})
    if not says_yes(answer) or not hop_passages:
        return answer, why
    ids = list(dict.fromkeys(i for k in sorted(hop_passages) for i in hop_passages[k]))
    texts = {p.id: p for p in await asyncio.to_thread(passages_by_id, services.engine, ids)}
    unsupported = unsupported_yes(answer, sub_questions, hop_passages, texts)
    if unsupported:
        log.info("yes check: %s", unsupported.why())
        return "no", unsupported.why()
    return answer, why
