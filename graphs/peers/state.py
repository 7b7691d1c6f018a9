"""State every peer graph shares; a peer adds its own fields by subclassing PeerState.

The final state of every peer has `question`, `final_answer`, `citations`, `messages` and `tokens`
exactly as GRASP's, so one runner reads them all; `passages` are the ids of the passages the answer
step was shown.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from graphs.agent.state import Citation, TokenTally, add_tokens


class PeerInput(TypedDict, total=False):
    """What a run is asked: a `question`, or `messages` whose last (a human one) is the question."""

    question: str
    messages: list[AnyMessage]


class PeerState(TypedDict, total=False):
    """The shared part of a peer's state; checkpointed after every step."""

    question: str
    corpus_id: int | None
    #: Ids of the passages the answer step is shown, in the order shown.
    passages: list[int]
    #: Reasoning the answer step is shown beside them (CoT sentences, sub-answers).
    notes: list[str]
    final_answer: str
    #: The answer's sources, picked from the passages shown (see graphs/peers/cite.py).
    citations: list[Citation]
    tokens: Annotated[TokenTally, add_tokens]
    #: The token budget (max_tokens) ended the search: the answer came from what was found.
    budget_stopped: bool
    error: str | None
    #: The thread's questions and answers as chat messages (a peer answers each one afresh).
    messages: Annotated[list[AnyMessage], add_messages]


def merged(seen: list[int], new: list[int]) -> list[int]:
    """`seen` followed by the ids of `new` not in it yet (order kept, each id once)."""
    known = set(seen)
    out = list(seen)
    for pid in new:
        if pid not in known:
            known.add(pid)
            out.append(pid)
    return out
