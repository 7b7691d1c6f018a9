"""State every peer graph shares; a peer adds its own fields by subclassing PeerState.

The final state of every peer has `question`, `final_answer` and `tokens` exactly as GRASP's, so
one runner reads them all; `passages` are the ids of the passages the answer step was shown.
"""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

from graphs.agent.state import TokenTally, add_tokens


class PeerInput(TypedDict):
    """What a run is asked."""

    question: str


class PeerState(TypedDict, total=False):
    """The shared part of a peer's state; checkpointed after every step."""

    question: str
    corpus_id: int | None
    #: Ids of the passages the answer step is shown, in the order shown.
    passages: list[int]
    #: Reasoning the answer step is shown beside them (CoT sentences, sub-answers).
    notes: list[str]
    final_answer: str
    tokens: Annotated[TokenTally, add_tokens]
    error: str | None


def merged(seen: list[int], new: list[int]) -> list[int]:
    """`seen` followed by the ids of `new` not in it yet (order kept, each id once)."""
    known = set(seen)
    out = list(seen)
    for pid in new:
        if pid not in known:
            known.add(pid)
            out.append(pid)
    return out
