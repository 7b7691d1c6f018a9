"""Progress events a client sees on the "custom" stream: the plan, each hop, the answer.

Every event is a dict with an "event" name; hop events carry the sub-question's `index` (and
hop_started its `of`, the plan's length) so a UI can place them. Outside a streamed run, or when
the client did not ask for stream_mode="custom", writing an event does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.config import get_stream_writer

#: The event names, in the order a run emits them (hop events repeat per sub-question and round).
EVENTS = (
    "planning",  # {"turn", "question"}
    "plan",  # {"plan", "sub_questions": [{"index", "text", "depends_on"}]} (again after a review)
    "plan_review",  # {"action": accept | edit | response | refused, "note"?} (review_plan only)
    "hop_started",  # {"index", "of", "question"}
    "searching",  # {"index", "round", "query"}
    "reading",  # {"index", "round", "passages"}
    "hop_done",  # {"index", "answer"}
    "hop_skipped",  # {"index", "of", "question", "after"}: builds on hops (`after`) that found nothing
    "synthesizing",  # {"hops"}
    "answer_delta",  # {"text"}: the answer's next words (see graphs.agent.answer_deltas)
    "answer_restart",  # {}: forget the answer text streamed so far
    "answer",  # {"answer", "justification"}
    "tokens",  # {"node", "hop", "input", "output", "total"}: after every LLM call (token_events)
)


def stream_writer() -> Callable[[dict[str, Any]], None]:
    """The run's custom-stream writer; one that drops events outside a graph run (a unit test)."""
    try:
        return get_stream_writer()
    except RuntimeError:
        return lambda _event: None


def emit(event: str, **fields: Any) -> None:
    """Send one progress event to the run's stream (a no-op when nobody streams "custom")."""
    stream_writer()({"event": event, **fields})
