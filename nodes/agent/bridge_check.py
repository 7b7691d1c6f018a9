"""The bridge check: a final answer that only names a bridge hop's answer is given the final hop's.

A small reader asked "What is the waterfall in the country where the Bubye River is?" often
answers the country: the bridge entity, named in every passage it reads. When the plan is a
chain (it ends in one hop, and that hop builds on one other) and its last hop found an answer,
an answer equal to an earlier hop's (and not to the last hop's) is that slip, and the last hop's
answer stands in for it. A last hop that combines several answers ("Are #1 and #2 American?")
is no chain end: a question that asks which of two things is meant to be answered by one of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nodes.agent.evaluate import UNKNOWN
from nodes.agent.plan_dag import SubQuestion, final_hops
from nodes.peers.answer import without_aside

_PUNCTUATION = re.compile(r"[^\w\s]")


def same_answer(a: str, b: str) -> bool:
    """Whether two answers are the same words, case and punctuation aside."""

    def words(text: str) -> list[str]:
        return _PUNCTUATION.sub(" ", text.casefold()).split()

    return words(a) == words(b)


@dataclass(frozen=True)
class BridgeSlip:
    """The answer was bridge hop `bridge`'s; `final` is the hop whose answer replaces it."""

    bridge: int
    final: int
    answer: str

    def why(self) -> str:
        """One line for the run's justification."""
        return (
            f"the reader answered step {self.bridge}'s answer, which a later step builds on; "
            f"step {self.final}'s answer is given instead"
        )


@dataclass(frozen=True)
class ChainEnd:
    """The last hop of a chain plan and the answer it found (an aside dropped)."""

    final: int
    answer: str


def chain_end(sub_questions: Sequence[SubQuestion], answers: Mapping[int, str]) -> ChainEnd | None:
    """The chain's last hop and its answer; None unless the plan is a chain whose end answered.

    A chain ends in one hop, and that hop builds on exactly one other.
    """
    ends = final_hops(sub_questions)
    if len(ends) != 1:
        return None
    (final,) = ends
    if len(next(sq for sq in sub_questions if sq["index"] == final)["depends_on"]) != 1:
        return None
    answer = without_aside(answers.get(final, UNKNOWN))
    if not answer or answer == UNKNOWN:
        return None
    return ChainEnd(final, answer)


def bridge_slip(
    answer: str, sub_questions: Sequence[SubQuestion], answers: Mapping[int, str]
) -> BridgeSlip | None:
    """The slip `answer` makes, or None when it is not one (or the plan is not a chain)."""
    end = chain_end(sub_questions, answers)
    if end is None or same_answer(answer, end.answer):
        return None
    for sq in sub_questions:
        bridge_answer = answers.get(sq["index"], UNKNOWN)
        if (
            sq["index"] != end.final
            and bridge_answer != UNKNOWN
            and same_answer(answer, bridge_answer)
        ):
            return BridgeSlip(sq["index"], end.final, end.answer)
    return None
